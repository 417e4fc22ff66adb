// What a Swarm's status is judged from: one observation of the world (the
// Swarm, its pool and pods, the workers' Leases, the config in force and its
// restart bookkeeping), and the problem that stops the Swarm, if one does.
import type { Swarm } from '../api/types.js';
import type { PodView, PoolView } from '../kube/types.js';
import type { LeaseLike, WorkerConfig } from '../workerconfig/index.js';
import type { WrittenAt } from './coverage.js';
import type { RestartWorkspace } from './workspace.js';

/** Something that stops the Swarm from converging until a human acts. */
export type ProblemReason =
  | 'InvalidSpec'
  // A rule over the spec and its pool (lib/api/schema.ts POOL_RULES).
  | 'AcknowledgementRequired'
  | 'StatefulSetNotFound'
  | 'StatefulSetClaimed'
  | 'DeploymentNotFound'
  | 'DeploymentClaimed'
  | 'ConfigMapConflict'
  | 'ConfigMapTooLarge'
  | 'TooManyWorkers'
  // The API refused a write for good (lib/kube/errors.ts classifyFailure).
  | 'Forbidden'
  | 'InvalidWrite'
  | 'NamespaceNotFound';

export interface StatusObservation {
  swarm: Swarm;
  /** RFC 3339, for lastTransitionTime of conditions that change now. */
  now: string;
  problem?: { reason: ProblemReason; message: string };
  /** The pool: a StatefulSet, or a Deployment. */
  statefulSet?: PoolView;
  config?: WorkerConfig;
  /** Workers the config assigns over, when it differs from the StatefulSet's replicas (spec.replicas mid-resize). */
  workers?: number;
  /** A Deployment pool's workers (pod names) as decided for this reconcile (deploymentWorkers). */
  members?: readonly string[];
  workspace?: RestartWorkspace;
  /** Needed only for the workers the restart bookkeeping lists. */
  pods: readonly PodView[];
  /** Dedicated jobs that had to share a worker. */
  unhonouredDedications?: number;
  /** The workers' acknowledgement Leases (lib/decisions/coverage.ts); none read means none written. */
  leases?: readonly LeaseLike[];
  /**
   * When the config version in force was written (the ConfigMap's last-change
   * annotation): what a rollout counts as blocked since, and what non-acknowledging
   * workers' start times are compared with.
   */
  lastChange?: WrittenAt;
}
