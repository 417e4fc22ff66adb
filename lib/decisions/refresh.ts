// Which pods to ask for their ConfigMap now. The kubelet refreshes a mounted
// ConfigMap on its periodic pod sync (up to its syncFrequency, 1 min by
// default, plus its cache's age), so a hot-reloading worker (restart policy
// None) sees a new share that late, and every stage of a staged handoff waits
// for it. Any change to a pod's annotations makes the kubelet sync that pod
// at once, and the sync remounts its ConfigMap volumes from the current object
// (kubernetes.io, "Configure a Pod to Use a ConfigMap": mounted ConfigMaps are
// updated automatically; Knative's GCP broker and the FoundationDB operator
// rely on the same). So assign writes the share's version into one annotation
// of each pod whose worker has not yet acknowledged it, once per version.
//
// A hint, never a fact: nothing is judged from the annotation (coverage and
// handoffs wait on the workers' own acknowledgements as before), and a hint
// lost, refused or read before the kubelet's cache has the new ConfigMap only
// leaves the worker on the kubelet's own schedule. Workers restarted to load
// (policy Restart) are not asked: a gainer that reloads anyway would start
// jobs before its losers' restarts, which break-before-make orders first.
import type { RestartPolicy } from '../api/types.js';
import type { PodView, PoolShape } from '../kube/types.js';
import type { LeaseLike, WorkerConfig } from '../workerconfig/index.js';
import { acknowledgementsByWorker, declaresAcknowledgement, judgeAcknowledgement } from './coverage.js';
import { ofPool } from './workers.js';

export interface RefreshInput {
  policy: RestartPolicy;
  pool: PoolShape;
  /** The config in force after this reconcile's write. */
  config: WorkerConfig;
  /** The pool's pods as listed (any order; others' pods are ignored). */
  pods: readonly PodView[];
  leases: readonly LeaseLike[];
}

/** Annotate `pod` (this uid, at this resourceVersion) with its share's `version`. */
export interface Refresh {
  pod: string;
  uid: string;
  resourceVersion: string;
  version: number;
}

/**
 * One request per live pod of a worker whose share's version is above the one
 * its pod was last asked for and whose own acknowledgement does not show it
 * running exactly that share (a pod that cannot acknowledge is asked once per
 * version).
 * Ordered by pod name, so the writes are deterministic.
 */
export function decideRefreshes(input: RefreshInput): Refresh[] {
  if (input.policy !== 'None') return [];
  const acks = acknowledgementsByWorker(input.leases);
  const refreshes: Refresh[] = [];
  for (const pod of input.pods) {
    const share = input.config.workloads[pod.name];
    if (!share || pod.terminating || !pod.uid || !ofPool(input.pool, pod)) continue;
    if (pod.refreshVersion !== undefined && pod.refreshVersion >= share.version) continue;
    // `covers` is not enough: that worker still runs the jobs it released, and the handoff's next stage waits for it to drop them.
    if (declaresAcknowledgement(pod) && judgeAcknowledgement(pod, share, acks) === 'runs') continue;
    refreshes.push({ pod: pod.name, uid: pod.uid, resourceVersion: pod.resourceVersion, version: share.version });
  }
  return refreshes.sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : 0));
}
