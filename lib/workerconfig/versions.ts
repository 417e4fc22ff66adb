// Version bookkeeping: the top-level version counts changes; a worker's
// version is the top-level version at which its own share last changed, so a
// worker compares it with the version it runs to know whether to restart.
import type { Assignment } from '../assignment/types.js';
import type { WorkerConfig, WorkerShare } from './types.js';

export function assignmentOf(config: WorkerConfig): Assignment {
  return Object.fromEntries(Object.entries(config.workloads).map(([worker, share]) => [worker, share.jobs]));
}

/**
 * The config for `assignment`; `previous` itself when nothing changed. The first config is version 1.
 * `floor`: the highest version published before (kept where deleting the ConfigMap cannot erase it):
 * when `previous` is lost or older than that, versions never go backwards — every share is new, at
 * max(floor, previous) + 1, because what the workers loaded is no longer known.
 */
export function nextConfig(previous: WorkerConfig | undefined, assignment: Assignment, floor = 0): WorkerConfig {
  if (previous === undefined || previous.version < floor) {
    const version = Math.max(floor, previous?.version ?? 0) + 1;
    return { version, workloads: shares(assignment, () => version) };
  }
  const version = previous.version + 1;
  const next = shares(assignment, (worker, jobs) => {
    const before = previous.workloads[worker];
    return before !== undefined && sameJobs(before.jobs, jobs) ? before.version : version;
  });
  const unchanged =
    Object.keys(previous.workloads).length === Object.keys(next).length &&
    Object.entries(next).every(([worker, share]) => previous.workloads[worker] !== undefined && share.version !== version);
  return unchanged ? previous : { version, workloads: next };
}

function shares(assignment: Assignment, versionOf: (worker: string, jobs: readonly string[]) => number): Record<string, WorkerShare> {
  // Object.fromEntries keeps any worker name an own key (even "__proto__").
  return Object.fromEntries(
    Object.entries(assignment).map(([worker, jobs]) => {
      const sorted = [...jobs].sort();
      return [worker, { jobs: sorted, version: versionOf(worker, sorted) }];
    }),
  );
}

function sameJobs(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return b.every((job) => set.has(job));
}
