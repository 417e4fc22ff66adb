/** A job as users write it: a bare name, or a name with a cost and a QoS flag. */
export type JobSpec = string | { name: string; weight?: number; dedicated?: boolean };

/** A job after defaults: weight 1..1000 (default 1), dedicated default false. */
export interface Job {
  readonly name: string;
  readonly weight: number;
  readonly dedicated: boolean;
}

/**
 * Who owns what: worker (pod) name `<statefulSet>-<ordinal>` → job names, sorted.
 * Every worker startOrdinal … startOrdinal+replicas-1 is present, possibly with an empty list.
 */
export type Assignment = Readonly<Record<string, readonly string[]>>;

export interface AssignInput {
  readonly statefulSetName: string;
  readonly replicas: number;
  /** The StatefulSet's spec.ordinals.start: its first pod's ordinal (default 0). */
  readonly startOrdinal?: number;
  /**
   * A Deployment pool's workers (pod names, `replicas` of them, in position
   * order: deploymentWorkers in workers.ts) instead of `<statefulSetName>-<ordinal>`.
   */
  readonly workers?: readonly string[];
  readonly jobs: readonly JobSpec[];
  /** The assignment currently in force (from the ConfigMap); absent on first assignment. */
  readonly previous?: Assignment;
}

export interface UnhonouredDedication {
  readonly job: string;
  readonly reason: string;
}

export interface AssignResult {
  readonly assignment: Assignment;
  /** Dedicated jobs that had to share a worker, and why. Empty when all were honoured. */
  readonly unhonouredDedications: readonly UnhonouredDedication[];
}
