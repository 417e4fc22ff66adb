// config.yml out: workers in ordinal order, jobs sorted, so equal assignments
// render byte-identically (a no-op write is then detectable by comparison).
import { stringify } from 'yaml';
import { compareNames } from '../assignment/jobs.js';
import { compareWorkers } from '../assignment/workers.js';
import type { WorkerConfig } from './types.js';

export function render(config: WorkerConfig): string {
  const { version, workloads } = canonical(config);
  // The yaml library quotes names that would otherwise read back differently
  // (leading/trailing spaces, `: `, `#`, numbers, booleans).
  return stringify({ workloads, version }, { lineWidth: 0, indentSeq: true });
}

/**
 * The config as `parse(render(config))` gives it back: workers in ordinal
 * order, names sorted, empty marks left out. What the assign reconciler
 * remembers for the text it has just written, instead of parsing it again.
 */
export function canonical(config: WorkerConfig): WorkerConfig {
  const workloads = Object.fromEntries(
    Object.entries(config.workloads)
      .sort(([a], [b]) => compareWorkers(a, b))
      .map(([worker, share]) => [
        worker,
        {
          jobs: [...share.jobs].sort(compareNames),
          version: share.version,
          ...(share.releasing?.length ? { releasing: [...share.releasing].sort(compareNames) } : {}),
          ...(share.awaiting?.length ? { awaiting: [...share.awaiting].sort(compareNames) } : {}),
          ...(share.released?.length ? { released: [...share.released].sort(compareNames) } : {}),
        },
      ]),
  );
  return { version: config.version, workloads };
}
