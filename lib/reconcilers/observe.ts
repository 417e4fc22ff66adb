// Observe: read everything a decision needs, fresh from the API, in one place.
// Both functions decide over the same observation, so they compute the same status.
import { validateSwarm } from '../api/validate.js';
import type { Swarm } from '../api/types.js';
import type { ConfigMapView, PodView, StatefulSetView } from '../kube/types.js';
import { claimant, type SwarmKey } from '../decisions/routing.js';
import type { ProblemReason } from '../decisions/status.js';
import type { ReconcileEnv } from './env.js';

export interface Observation {
  /** The Swarm as read (with resourceVersion and status), for guarded status writes. */
  swarm: Swarm;
  /** Validated, defaults applied; absent when the spec is invalid. */
  valid?: Swarm;
  problem?: { reason: ProblemReason; message: string };
  statefulSet?: StatefulSetView;
  configMap?: ConfigMapView;
  pods: PodView[];
}

/** undefined: the Swarm is gone or going (a no-op, not an error). */
export async function observe(env: ReconcileEnv, key: SwarmKey): Promise<Observation | undefined> {
  const swarm = await env.kube.getSwarm(key.namespace, key.name);
  if (!swarm || swarm.metadata.deletionTimestamp) return undefined;

  const validation = validateSwarm(swarm);
  if (!validation.ok) {
    return { swarm, pods: [], problem: { reason: 'InvalidSpec', message: validation.problems.join('; ') } };
  }
  const valid = validation.swarm;
  const stsName = valid.spec.statefulSetName;

  const owner = claimant(await env.kube.listSwarms(key.namespace), stsName);
  if (owner && owner.metadata.uid !== swarm.metadata.uid) {
    return {
      swarm,
      valid,
      pods: [],
      problem: { reason: 'StatefulSetClaimed', message: `StatefulSet ${stsName} is already managed by Swarm ${owner.metadata.name}` },
    };
  }

  const statefulSet = await env.kube.getStatefulSet(key.namespace, stsName);
  if (!statefulSet) {
    return { swarm, valid, pods: [], problem: { reason: 'StatefulSetNotFound', message: `StatefulSet ${stsName} not found` } };
  }
  const [configMap, pods] = await Promise.all([
    env.kube.getConfigMap(key.namespace, valid.spec.configMapName),
    env.kube.listPods(key.namespace, statefulSet.labelSelector),
  ]);
  return { swarm, valid, statefulSet, ...(configMap ? { configMap } : {}), pods };
}
