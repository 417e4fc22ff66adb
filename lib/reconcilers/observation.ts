// What one look read and judged: the Swarm, validated, and what its decisions
// need. Its own file so that what keeps looks (settled.ts) and how a look is
// made (observe.ts, over a ReconcileEnv) do not lean on each other.
import type { Swarm, ValidSwarm } from '../api/types.js';
import type { ProblemReason } from '../decisions/status.js';
import type { ConfigMapView, LeaseView, PodView, PoolView } from '../kube/types.js';

export interface Observation {
  /** The Swarm as read (with resourceVersion and status), for guarded status writes. */
  swarm: Swarm;
  /** Validated, defaults applied; absent when the spec is invalid. */
  valid?: ValidSwarm;
  problem?: { reason: ProblemReason; message: string };
  /** The pool (a StatefulSet, or a Deployment); absent when it does not exist (a problem) or its read was deferred. */
  statefulSet?: PoolView;
  configMap?: ConfigMapView;
  /** With `workers`: the StatefulSet's pods and the workers' acknowledgement Leases. */
  workers?: { pods: PodView[]; leases: LeaseView[] };
}
