// Observe: read everything a decision needs, fresh from the API, in one place.
// Both functions decide over it; only assign judges status from it (one writer).
import { validateSwarm } from '../api/validate.js';
import type { Swarm, ValidSwarm } from '../api/types.js';
import type { ConfigMapView, LeaseView, PodView, StatefulSetView } from '../kube/types.js';
import { SWARM_LABEL } from '../workerconfig/index.js';
import { claimant, type SwarmKey } from '../decisions/routing.js';
import type { ProblemReason } from '../decisions/status.js';
import type { ReconcileEnv } from './env.js';

export interface Observation {
  /** The Swarm as read (with resourceVersion and status), for guarded status writes. */
  swarm: Swarm;
  /** Validated, defaults applied; absent when the spec is invalid. */
  valid?: ValidSwarm;
  problem?: { reason: ProblemReason; message: string };
  statefulSet?: StatefulSetView;
  configMap?: ConfigMapView;
  pods: PodView[];
  /** The workers' acknowledgement Leases, when asked for (assign judges status from them). */
  leases?: LeaseView[];
}

/**
 * undefined: the Swarm is gone or going (a no-op, not an error).
 * `claimants`: the Swarms naming the StatefulSet as listed for this event; the
 * Swarm is taken from that list rather than read again. Without it (a Swarm
 * event, a retry after a conflict, a coalesced follow-up) everything is read here.
 */
export async function observe(
  env: ReconcileEnv,
  key: SwarmKey,
  claimants?: readonly Swarm[],
  want: { leases?: boolean } = {},
): Promise<Observation | undefined> {
  const listed = claimants?.find((s) => s.metadata.name === key.name);
  const swarm = listed ?? (await env.kube.getSwarm(key.namespace, key.name));
  if (!swarm || swarm.metadata.deletionTimestamp) return undefined;

  const validation = validateSwarm(swarm);
  if (!validation.ok) {
    return { swarm, pods: [], problem: { reason: 'InvalidSpec', message: validation.problems.join('; ') } };
  }
  const valid = validation.swarm;
  const stsName = valid.spec.statefulSetName;

  // Listed once: the event's list if it was of this StatefulSet, else now.
  const naming = listed && listed.spec?.statefulSetName === stsName ? claimants ?? [] : await env.kube.listSwarmsNaming(key.namespace, stsName);
  const owner = claimant(naming, stsName);
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
  const [configMap, pods, leases] = await Promise.all([
    env.kube.getConfigMap(key.namespace, valid.spec.configMapName),
    env.kube.listPods(key.namespace, statefulSet.labelSelector),
    want.leases ? env.kube.listLeases(key.namespace, `${SWARM_LABEL}=${stsName}`) : undefined,
  ]);
  return { swarm, valid, statefulSet, ...(configMap ? { configMap } : {}), pods, ...(leases ? { leases } : {}) };
}
