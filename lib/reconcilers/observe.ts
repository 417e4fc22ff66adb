// Observe: read what every decision needs, fresh from the API, in one place:
// the Swarm (with the Swarms naming its StatefulSet), the StatefulSet and the
// ConfigMap; with `workers`, also what the workers are: their pods and their
// acknowledgement Leases (assign judges coverage, and so status, from them).
// Otherwise pods are listed apart (`listWorkerPods`), only when a decision
// needs them (restart, only with steps to take).
// Both functions decide over it; only assign judges status from it (one writer).
// A Deployment pool (spec.deploymentName) is observed alike: its Deployment
// stands where the StatefulSet does (a PoolView), its pods are its workers.
import { poolRuleProblem, validateSwarm } from '../api/validate.js';
import { poolOf, type Swarm, type ValidSwarm } from '../api/types.js';
import type { ConfigMapView, LeaseView, PodView, PoolView } from '../kube/types.js';
import { SWARM_LABEL } from '../workerconfig/index.js';
import { claimant, type SwarmKey } from '../decisions/routing.js';
import type { ProblemReason } from '../decisions/status-observation.js';
import { restartsUnsealed } from '../decisions/workspace.js';
import type { ReconcileEnv } from './env.js';

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
  if (pool.kind === 'Deployment') return observeDeploymentPool(env, key, swarm, valid, claimants, read);
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
    env.kube.getStatefulSet(key.namespace, stsName),
    env.kube.getConfigMap(key.namespace, valid.spec.configMapName),
    read === 'workers' ? env.kube.listLeases(key.namespace, `${SWARM_LABEL}=${stsName}`) : undefined,
    selectorSeen ? env.kube.listPods(key.namespace, selectorSeen) : undefined,
  ]);
  if (!statefulSet) {
    // The ConfigMap too: assign may write the first config before the StatefulSet exists.
    return { swarm, valid, ...(configMap ? { configMap } : {}), problem: { reason: 'StatefulSetNotFound', message: `StatefulSet ${stsName} not found` } };
  }
  const refused = poolRuleProblem(valid.spec, statefulSet.templateLabels);
  if (refused) return { swarm, valid, statefulSet, ...(configMap ? { configMap } : {}), problem: refused };
  // Listed beside the ConfigMap, they may predate its last write: while that write's pods are unsealed, they are
  // listed again after it (restart-bookkeeping.ts sealRestarts pins what was made while it landed).
  const beside = podsBySelectorSeen && selectorSeen === statefulSet.labelSelector && !(configMap && restartsUnsealed(configMap.annotations));
  const pods = !leases ? undefined : beside ? podsBySelectorSeen : await listWorkerPods(env, statefulSet);
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
    env.kube.getDeployment(key.namespace, name),
    env.kube.getConfigMap(key.namespace, valid.spec.configMapName),
    read === 'workers' ? env.kube.listLeases(key.namespace, `${SWARM_LABEL}=${name}`) : undefined,
  ]);
  if (!deployment) return { swarm, valid, problem: { reason: 'DeploymentNotFound', message: `Deployment ${name} not found` } };
  const refused = poolRuleProblem(valid.spec, deployment.templateLabels);
  if (refused) return { swarm, valid, statefulSet: deployment, ...(configMap ? { configMap } : {}), problem: refused };
  const workers = leases ? { pods: await listWorkerPods(env, deployment), leases } : undefined;
  return { swarm, valid, statefulSet: deployment, ...(configMap ? { configMap } : {}), ...(workers ? { workers } : {}) };
}

/** The pool's pods, for decisions about particular workers (restart steps, the pods holding a changed share). */
export function listWorkerPods(env: ReconcileEnv, statefulSet: PoolView): Promise<PodView[]> {
  return env.kube.listPods(statefulSet.namespace, statefulSet.labelSelector);
}
