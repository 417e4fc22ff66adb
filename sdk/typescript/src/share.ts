// What one worker owns, and how that changes between two config versions.
// Pure functions over plain data: the I/O lives in watch.ts and main.ts.

/** The part of a parsed config.yml a worker reads (see lib/workerconfig). */
export interface WorkloadsView {
  readonly version?: number;
  readonly workloads: Readonly<Record<string, { readonly jobs: readonly string[]; readonly version: number } | undefined>>;
}

/** This worker's share: its jobs and the version it was assigned at. */
export interface Share {
  readonly jobs: readonly string[];
  /** Version of this worker's entry; -1 while the worker has no entry yet. */
  readonly version: number;
}

export const EMPTY_SHARE: Share = Object.freeze({ jobs: Object.freeze([]) as readonly string[], version: -1 });

export interface ShareChange {
  readonly gained: readonly string[];
  readonly lost: readonly string[];
  readonly kept: readonly string[];
}

/**
 * A worker's share by pod name. A pod missing from the config owns nothing
 * (it may be new, and the assign function has not seen it yet).
 */
export function shareOf(config: WorkloadsView, podName: string): Share {
  const entry = config.workloads[podName];
  if (!entry) return EMPTY_SHARE;
  return { jobs: [...entry.jobs].sort(), version: entry.version };
}

/** Jobs to start, to stop and to keep running when moving from `before` to `after`. */
export function diffShares(before: Share, after: Share): ShareChange {
  const previous = new Set(before.jobs);
  const next = new Set(after.jobs);
  return {
    gained: after.jobs.filter((job) => !previous.has(job)),
    lost: before.jobs.filter((job) => !next.has(job)),
    kept: after.jobs.filter((job) => previous.has(job)),
  };
}
