// Plain views (lib/kube/types.ts) and decided writes as the pure tests build
// them: a Swarm over StatefulSet swarm-worker in namespace ns, its pods, their
// acknowledgement Leases and the ConfigMap as the API would hold it.
import type { Swarm, ValidSwarm } from '../../lib/api/types.js';
import { validateSwarm } from '../../lib/api/validate.js';
import { decideConfigMap, type AssignObservation } from '../../lib/decisions/configmap.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import type { ConfigMapView, LeaseView, PodView, StatefulSetView } from '../../lib/kube/types.js';
import { ACKNOWLEDGES_LABEL, ACKNOWLEDGES_VALUE, DIGEST_ANNOTATION, LOADED_AT_ANNOTATION, SWARM_LABEL, VERSION_ANNOTATION, jobsDigest, parse, type WorkerConfig } from '../../lib/workerconfig/index.js';

type AssignDecision = ReturnType<typeof decideConfigMap>;

/** `s` as the API server stores it (uid `swarm-uid` unless it has one, generation 1), validated; throws if it is not valid. */
export function validSwarm(s: Swarm): ValidSwarm {
  const v = validateSwarm({ ...s, metadata: { ...s.metadata, uid: s.metadata.uid ?? 'swarm-uid', generation: 1 } });
  if (!v.ok) throw new Error(v.problems.join('; '));
  return v.swarm;
}

/** StatefulSet swarm-worker at `replicas`. */
export const sts = (replicas: number): StatefulSetView => ({ name: 'swarm-worker', namespace: 'ns', uid: 'sts-uid', replicas, labelSelector: 'app=swarm-worker' });

/** A Ready pod of StatefulSet swarm-worker: `swarm-worker-<ordinal>` with uid `pod-<ordinal>` (or the name given, uid `pod-<name>`); `over` replaces any field. */
export function workerPod(ordinal: number | string, over: Partial<PodView> = {}): PodView {
  const { labels = { app: 'swarm-worker' }, ...rest } = over;
  return {
    name: typeof ordinal === 'number' ? `swarm-worker-${ordinal}` : ordinal,
    namespace: 'ns',
    uid: `pod-${ordinal}`,
    resourceVersion: '1',
    creationTimestamp: '2026-01-01T00:00:00Z',
    ready: true,
    terminating: false,
    // A copy: a test may change one pod's labels without changing another's.
    labels: { ...labels },
    ownerStatefulSet: 'swarm-worker',
    ...rest,
  };
}

/** The labels of a worker pod that acknowledges what it runs in its Lease. */
export const acknowledgingLabels: Record<string, string> = { app: 'swarm-worker', [ACKNOWLEDGES_LABEL]: ACKNOWLEDGES_VALUE };

/**
 * `build` giving each call a new incarnation of the pod: uid `pod-<ordinal>-<n>`
 * and resourceVersion `n` from one counter, as a pod deleted and recreated
 * under the same name would have.
 */
export function incarnations(build: (ordinal: number, over?: Partial<PodView>) => PodView = workerPod): (ordinal: number, over?: Partial<PodView>) => PodView {
  let n = 0;
  return (ordinal, over = {}) => {
    n++;
    return build(ordinal, { uid: `pod-${ordinal}-${n}`, resourceVersion: String(n), ...over });
  };
}

/** The Lease of `p` saying it runs `jobs` of config version `version` (and loaded it at `loadedAt`, when given); `over` replaces any field. */
export const acknowledgement = (p: PodView, version: number, jobs: readonly string[], over: Partial<LeaseView> = {}, loadedAt?: string): LeaseView => ({
  name: p.name,
  namespace: 'ns',
  resourceVersion: '1',
  holderIdentity: p.uid,
  labels: { [SWARM_LABEL]: 'swarm-worker' },
  annotations: { [VERSION_ANNOTATION]: String(version), [DIGEST_ANNOTATION]: jobsDigest(jobs), ...(loadedAt ? { [LOADED_AT_ANNOTATION]: loadedAt } : {}) },
  ...over,
});

/** `p` acknowledges exactly its share in `config`. */
export const runs = (p: PodView, config: WorkerConfig): LeaseView => acknowledgement(p, config.version, config.workloads[p.name]?.jobs ?? []);

/** The decision, which must be to converge (throws with the reason if it is blocked). */
export function converge(d: AssignDecision): Extract<AssignDecision, { kind: 'converge' }> {
  if (d.kind !== 'converge') throw new Error(`blocked: ${d.message}`);
  return d;
}

let lastResourceVersion = 10;
/** The ConfigMap as the API would hold it after the decided write: at `resourceVersion`, or each time a newer one. */
export const written = (d: AssignDecision, resourceVersion = String(++lastResourceVersion)): ConfigMapView => ({ ...converge(d).configMap, uid: 'cm-uid', resourceVersion });

/** The worker config a ConfigMap holds. */
export const configOf = (cm: ConfigMapView): WorkerConfig => parse(cm.data['config.yml']!);

/**
 * The ConfigMap after `d`'s write once assign's next look has sealed it, as production does: a write that changes
 * shares under policy Restart records them `unsealed` (its steps are pinned from pods listed before it landed), and
 * the next look lists the pods after it (lib/reconcilers/observe.ts) and pins any made meanwhile
 * (lib/decisions/restart-bookkeeping.ts sealRestarts): one more guarded write, at a newer resourceVersion. `next` is
 * that look, its pods as listed after the write. A write with nothing unsealed is returned as written. Throws if
 * the look decides more than the seal (a new config version): the test would be chaining two changes.
 */
export function sealed(d: AssignDecision, next: Omit<AssignObservation, 'configMap'>): ConfigMapView {
  const cm = written(d);
  if (!readRestarts(cm.annotations).unsealed) return cm;
  const seal = converge(decideConfigMap({ ...next, configMap: cm }));
  if (seal.changed) throw new Error(`the look after the write changed the config (version ${seal.config.version}), not only sealed it`);
  return written(seal);
}
