// Observe: read what every decision needs, fresh from the API, in one place:
// the Swarm (with the Swarms naming its StatefulSet), the StatefulSet and the
// ConfigMap; with `workers`, also what the workers are: their pods and their
// acknowledgement Leases (assign judges coverage, and so status, from them).
// Otherwise pods are listed apart (`listWorkerPods`), only when a decision
// needs them (restart, only with steps to take).
// Both functions decide over it; only assign judges status from it (one writer).
// A Deployment pool (spec.deploymentName) is observed alike: its Deployment
// stands where the StatefulSet does (a PoolView), its pods are its workers.
// What a glance just read (glance.ts) is part of the observation, not read again.
import { validateSwarm } from '../api/validate.js';
import { poolOf, type PoolRef, type Swarm, type ValidSwarm } from '../api/types.js';
import type { DeploymentView, PodView, PoolView, StatefulSetView } from '../kube/types.js';
import { SWARM_LABEL } from '../workerconfig/index.js';
import { claimant, type SwarmKey } from '../decisions/routing.js';
import type { ReconcileEnv } from './env.js';
import type { Glimpsed } from './glance.js';
import type { Observation } from './observation.js';

// Observation is defined in observation.ts (settled.ts keeps looks without depending on how they are made).
export type { Observation };

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
  /**
   * 'deferred': the caller reads the StatefulSet itself when it needs it (restart, only with steps to take);
   * 'workers': the StatefulSet, and its pods and Leases with the ConfigMap (assign: status judges coverage).
   */
  read: 'now' | 'deferred' | 'workers' = 'now',
  /** What a glance just read (glance.ts): not read again. */
  glimpsed: Glimpsed = {},
): Promise<Observation | undefined> {
  const listed = claimants?.find((s) => s.metadata.name === key.name);
  const swarm = listed ?? (await env.kube.getSwarm(key.namespace, key.name));
  if (!swarm || swarm.metadata.deletionTimestamp) return undefined;

  const validation = validateSwarm(swarm);
  if (!validation.ok) {
    return { swarm, problem: { reason: 'InvalidSpec', message: validation.problems.join('; ') } };
  }
  const valid = validation.swarm;
  const pool = poolOf(valid.spec);
  if (pool.kind === 'Deployment') return observeDeploymentPool(env, key, swarm, valid, claimants, read, glimpsed);
  const stsName = pool.name;

  // Listed once: the event's list if it was of this StatefulSet, else now.
  const naming = listed && listed.spec?.statefulSetName === stsName ? claimants ?? [] : await env.kube.listSwarmsNaming(key.namespace, stsName);
  const owner = claimant(naming, stsName);
  if (owner && owner.metadata.uid !== swarm.metadata.uid) {
    return {
      swarm,
      valid,
      problem: { reason: 'StatefulSetClaimed', message: `StatefulSet ${stsName} is already managed by Swarm ${owner.metadata.name}` },
    };
  }

  if (read === 'deferred') {
    const configMap = await env.kube.getConfigMap(key.namespace, valid.spec.configMapName);
    return { swarm, valid, ...(configMap ? { configMap } : {}) };
  }
  // The pods are listed by the StatefulSet's selector, which is immutable: the
  // one status recorded (status.selector) lets them be listed alongside the
  // StatefulSet, and is checked against it — a guess that saves a round trip,
  // never trusted (no status yet, or a StatefulSet recreated with another selector: listed again).
  const selectorSeen = read === 'workers' ? swarm.status?.selector : undefined;
  const [statefulSet, configMap, leases, podsBySelectorSeen] = await Promise.all([
    glimpsedPool(glimpsed, 'StatefulSet', stsName) ?? env.kube.getStatefulSet(key.namespace, stsName),
    readConfigMap(env, key.namespace, valid.spec.configMapName, glimpsed),
    read === 'workers' ? glimpsed.leases ?? env.kube.listLeases(key.namespace, `${SWARM_LABEL}=${stsName}`) : undefined,
    selectorSeen ? (glimpsed.pods?.selector === selectorSeen ? glimpsed.pods.pods : env.kube.listPods(key.namespace, selectorSeen)) : undefined,
  ]);
  if (!statefulSet) {
    // The ConfigMap too: assign may write the first config before the StatefulSet exists.
    return { swarm, valid, ...(configMap ? { configMap } : {}), problem: { reason: 'StatefulSetNotFound', message: `StatefulSet ${stsName} not found` } };
  }
  const pods = !leases ? undefined : podsBySelectorSeen && selectorSeen === statefulSet.labelSelector ? podsBySelectorSeen : await listWorkerPods(env, statefulSet);
  const workers = leases && pods ? { pods, leases } : undefined;
  return { swarm, valid, statefulSet, ...(configMap ? { configMap } : {}), ...(workers ? { workers } : {}) };
}

/**
 * The same observation for a Deployment pool: the Swarms naming the Deployment
 * (its claim check), the Deployment, the ConfigMap, and (assign) its pods and
 * the workers' Leases, labelled with the Deployment's name.
 */
async function observeDeploymentPool(
  env: ReconcileEnv,
  key: SwarmKey,
  swarm: Swarm,
  valid: ValidSwarm,
  claimants: readonly Swarm[] | undefined,
  read: 'now' | 'deferred' | 'workers',
  glimpsed: Glimpsed,
): Promise<Observation> {
  const name = valid.spec.deploymentName ?? '';
  const listed = claimants?.some((s) => s.metadata.uid === swarm.metadata.uid && s.spec?.deploymentName === name);
  const naming = listed ? claimants ?? [] : await env.kube.listSwarmsNaming(key.namespace, name, 'Deployment');
  const owner = claimant(naming, name, 'Deployment');
  if (owner && owner.metadata.uid !== swarm.metadata.uid) {
    return { swarm, valid, problem: { reason: 'DeploymentClaimed', message: `Deployment ${name} is already managed by Swarm ${owner.metadata.name}` } };
  }
  if (read === 'deferred') {
    const configMap = await env.kube.getConfigMap(key.namespace, valid.spec.configMapName);
    return { swarm, valid, ...(configMap ? { configMap } : {}) };
  }
  const [deployment, configMap, leases] = await Promise.all([
    glimpsedPool(glimpsed, 'Deployment', name) ?? env.kube.getDeployment(key.namespace, name),
    readConfigMap(env, key.namespace, valid.spec.configMapName, glimpsed),
    read === 'workers' ? glimpsed.leases ?? env.kube.listLeases(key.namespace, `${SWARM_LABEL}=${name}`) : undefined,
  ]);
  if (!deployment) return { swarm, valid, problem: { reason: 'DeploymentNotFound', message: `Deployment ${name} not found` } };
  const pods = !leases ? undefined : glimpsed.pods?.selector === deployment.labelSelector ? glimpsed.pods.pods : await listWorkerPods(env, deployment);
  const workers = leases && pods ? { pods, leases } : undefined;
  return { swarm, valid, statefulSet: deployment, ...(configMap ? { configMap } : {}), ...(workers ? { workers } : {}) };
}

/** The pool a glance read, if it is the one named now: a promise of it (absent: undefined), else undefined (read it). */
function glimpsedPool<K extends PoolRef['kind']>(glimpsed: Glimpsed, kind: K, name: string): Promise<(K extends 'Deployment' ? DeploymentView : StatefulSetView) | undefined> | undefined {
  const seen = glimpsed.pool;
  if (!seen || seen.ref.kind !== kind || seen.ref.name !== name || (seen.view && (seen.view.kind ?? 'StatefulSet') !== kind)) return undefined;
  return Promise.resolve((seen.view ?? undefined) as (K extends 'Deployment' ? DeploymentView : StatefulSetView) | undefined);
}

const readConfigMap = (env: ReconcileEnv, namespace: string, name: string, glimpsed: Glimpsed) =>
  glimpsed.configMap !== undefined ? Promise.resolve(glimpsed.configMap ?? undefined) : env.kube.getConfigMap(namespace, name);

/** The pool's pods, for decisions about particular workers (restart steps, the pods holding a changed share). */
export function listWorkerPods(env: ReconcileEnv, statefulSet: PoolView): Promise<PodView[]> {
  return env.kube.listPods(statefulSet.namespace, statefulSet.labelSelector);
}
