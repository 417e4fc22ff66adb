// Version bookkeeping: the top-level version counts changes; a worker's
// version is the top-level version at which its own jobs last changed, so a
// worker compares it with the version it runs to know whether to reload.
import type { Assignment } from '../assignment/types.js';
import type { WorkerConfig, WorkerShare } from './types.js';

/**
 * Who owns what: each worker's jobs, without those it is releasing and with
 * those it is awaiting (a staged handoff, types.ts). The assigner's sticky input.
 */
export function assignmentOf(config: WorkerConfig): Assignment {
  return Object.fromEntries(
    Object.entries(config.workloads).map(([worker, share]) => {
      const releasing = new Set(share.releasing ?? []);
      return [worker, [...share.jobs.filter((j) => !releasing.has(j)), ...(share.awaiting ?? [])]];
    }),
  );
}

/** A staged handoff's marks per worker (lib/decisions/handoff.ts). */
export type HandoffMarks = Readonly<
  Record<string, { readonly releasing?: readonly string[]; readonly awaiting?: readonly string[]; readonly released?: readonly string[] }>
>;

/**
 * The config publishing `jobs` per worker (with a staged handoff's `marks`);
 * `previous` itself when nothing changed. The first config is version 1.
 * `floor`: the highest version published before (kept where deleting the
 * ConfigMap cannot erase it): when `previous` is lost or older than that,
 * versions never go backwards — every share is new, at max(floor, previous) + 1,
 * because what the workers loaded is no longer known.
 */
export function nextConfig(previous: WorkerConfig | undefined, jobs: Assignment, options: { marks?: HandoffMarks; floor?: number } = {}): WorkerConfig {
  const { marks = {}, floor = 0 } = options;
  const marked = (worker: string, share: WorkerShare): WorkerShare => {
    const releasing = [...(marks[worker]?.releasing ?? [])].sort();
    const awaiting = [...(marks[worker]?.awaiting ?? [])].sort();
    const released = [...(marks[worker]?.released ?? [])].sort();
    return { ...share, ...(releasing.length ? { releasing } : {}), ...(awaiting.length ? { awaiting } : {}), ...(released.length ? { released } : {}) };
  };
  if (previous === undefined || previous.version < floor) {
    const version = Math.max(floor, previous?.version ?? 0) + 1;
    return { version, workloads: shares(jobs, (_worker, owned) => ({ jobs: [...owned].sort(), version }), marked) };
  }
  const version = previous.version + 1;
  const next = shares(
    jobs,
    (worker, owned) => {
      const before = previous.workloads[worker];
      // An unchanged share keeps its version and its list as published (no sort).
      return before !== undefined && sameJobs(before.jobs, owned) ? { jobs: before.jobs, version: before.version } : { jobs: [...owned].sort(), version };
    },
    marked,
  );
  const unchanged =
    Object.keys(previous.workloads).length === Object.keys(next).length &&
    Object.entries(next).every(([worker, share]) => {
      const before = previous.workloads[worker];
      const sameMarks = (['releasing', 'awaiting', 'released'] as const).every((mark) => sameJobs(before?.[mark] ?? [], share[mark] ?? []));
      return before !== undefined && share.version !== version && sameMarks;
    });
  return unchanged ? previous : { version, workloads: next };
}

function shares(
  assignment: Assignment,
  shareOf: (worker: string, jobs: readonly string[]) => WorkerShare,
  marked: (worker: string, share: WorkerShare) => WorkerShare,
): Record<string, WorkerShare> {
  // Object.fromEntries keeps any worker name an own key (even "__proto__").
  return Object.fromEntries(Object.entries(assignment).map(([worker, jobs]) => [worker, marked(worker, shareOf(worker, jobs))]));
}

/** The same jobs, each once (a list read from a hand-edited config may repeat one). */
function sameJobs(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return set.size === a.length && b.every((job) => set.has(job));
}
