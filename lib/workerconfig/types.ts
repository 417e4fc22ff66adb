/**
 * One worker's share in config.yml. `version`: the top-level version at which
 * its `jobs` last changed. `jobs` is what the worker runs. While a job changes
 * hands between hot-reloading workers (restart policy None) the handoff is
 * staged in the config itself, and marked:
 * - `releasing`: jobs in `jobs` that belong to another worker now; this worker
 *   keeps running them until the new owner acknowledges them (make-before-break);
 * - `awaiting`: jobs that belong to this worker now but are not in `jobs` yet;
 *   they are added once their previous owner acknowledges having stopped them
 *   (break-before-make);
 * - `released`: jobs removed from `jobs` that this worker may still run until
 *   it acknowledges its smaller share (it reloads on the kubelet's schedule), so
 *   status can count them covered meanwhile.
 */
export interface WorkerShare {
  readonly jobs: readonly string[];
  readonly version: number;
  readonly releasing?: readonly string[];
  readonly awaiting?: readonly string[];
  readonly released?: readonly string[];
}

/** The ConfigMap's config.yml: `workloads: {<sts>-<ordinal>: {jobs, version}}` and a top-level `version`. */
export interface WorkerConfig {
  readonly version: number;
  readonly workloads: Readonly<Record<string, WorkerShare>>;
}
