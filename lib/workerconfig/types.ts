/** One worker's share in config.yml. `version`: the top-level version at which this share last changed. */
export interface WorkerShare {
  readonly jobs: readonly string[];
  readonly version: number;
}

/** The ConfigMap's config.yml: `workloads: {<sts>-<ordinal>: {jobs, version}}` and a top-level `version`. */
export interface WorkerConfig {
  readonly version: number;
  readonly workloads: Readonly<Record<string, WorkerShare>>;
}
