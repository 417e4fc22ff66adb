// ReconcileKind for `restart`: observe the Swarm's pods and the restart
// workspace; delete the pods still holding an older share, in handoff order
// and within maxUnavailable (pure decision); prune finished bookkeeping.
import type { Swarm } from '../api/types.js';
import { foreignController } from '../decisions/configmap.js';
import { decideRestarts } from '../decisions/restarts.js';
import type { SwarmKey } from '../decisions/routing.js';
import { computeStatus } from '../decisions/status.js';
import { ANNOTATION_RESTARTS, readAssigned, readRestarts, withRestarts } from '../decisions/workspace.js';
import type { ConfigMapView } from '../kube/types.js';
import { parse, type WorkerConfig } from '../workerconfig/index.js';
import type { ReconcileEnv } from './env.js';
import { rfc3339 } from './env.js';
import { observe } from './observe.js';
import { reportPermanent } from './permanent.js';
import { retryOnConflict } from './retry.js';
import { writeStatus } from './status-writer.js';

export interface RestartOutcome {
  key: SwarmKey;
  result: 'gone' | 'blocked' | 'restarting' | 'waiting' | 'idle';
  /** Pods deleted by this reconcile. */
  restarted: string[];
  /** Workers still to restart. */
  outstanding: string[];
  waiting: string;
  writes: number;
}

/** `claimants`: the Swarms listed for this event (keys.ts), used by the first attempt only. */
export async function reconcileRestart(env: ReconcileEnv, key: SwarmKey, claimants?: readonly Swarm[]): Promise<RestartOutcome> {
  const carry = { writes: 0, restarted: [] as string[] };
  let outcome: Omit<RestartOutcome, 'restarted' | 'writes'>;
  try {
    outcome = await retryOnConflict(env, `restart ${key.namespace}/${key.name}`, (n) => restartOnce(env, key, carry, n === 1 ? claimants : undefined));
  } catch (err) {
    const refused = await reportPermanent(env, key, err);
    if (!refused) throw err;
    return { key, result: 'blocked', restarted: carry.restarted, outstanding: [], waiting: refused.message, writes: carry.writes + refused.writes };
  }
  // Deletes made by an attempt that then met a conflict are still this reconcile's.
  const result = carry.restarted.length && (outcome.result === 'idle' || outcome.result === 'waiting') ? 'restarting' : outcome.result;
  return { ...outcome, result, restarted: carry.restarted, writes: carry.writes };
}

async function restartOnce(
  env: ReconcileEnv,
  key: SwarmKey,
  carry: { writes: number; restarted: string[] },
  claimants: readonly Swarm[] | undefined,
): Promise<Omit<RestartOutcome, 'restarted' | 'writes'>> {
  const idle = { key, outstanding: [], waiting: '' };
  const obs = await observe(env, key, claimants);
  if (!obs) return { ...idle, result: 'gone' };
  const now = rfc3339(env.now());

  if (obs.problem || !obs.valid || !obs.statefulSet) {
    // Problems of the spec and the StatefulSet are `assign`'s to report (one
    // writer); with no valid spec and StatefulSet there is nothing to restart.
    return { ...idle, result: 'blocked', waiting: obs.problem?.message ?? 'unreadable Swarm' };
  }
  const { valid, statefulSet, configMap, pods } = obs;
  // A ConfigMap controlled by something else holds no workspace of ours (assign reports the conflict).
  const other = configMap && foreignController(configMap, valid);
  if (other) return { ...idle, result: 'blocked', waiting: `ConfigMap ${configMap.name} is controlled by ${other.kind} ${other.name}` };
  const workspace = readRestarts(configMap?.annotations ?? {});
  const decision = decideRestarts({ swarm: valid, statefulSet, workspace, pods });

  for (const pod of decision.deletes) {
    const result = await env.kube.deletePod(pod.namespace, pod.name, { uid: pod.uid, resourceVersion: pod.resourceVersion });
    carry.writes += 1;
    if (result === 'deleted') {
      carry.restarted.push(pod.name);
      env.onPodRestart?.();
    }
    env.log.info({ pod: pod.name, uid: pod.uid, result }, 'restart');
  }

  let recorded = workspace;
  if (configMap?.resourceVersion && decision.prunedWorkspace) {
    // Finished steps are forgotten; a conflict here means the config moved on: decide again.
    const pruned = withRestarts(configMap.annotations, decision.prunedWorkspace);
    await env.kube.patchConfigMap({
      name: configMap.name,
      namespace: configMap.namespace,
      resourceVersion: configMap.resourceVersion,
      annotations: { [ANNOTATION_RESTARTS]: pruned[ANNOTATION_RESTARTS] ?? null },
    });
    carry.writes += 1;
    env.onConfigMapWrite?.();
    recorded = decision.prunedWorkspace;
  }

  // Status from the bookkeeping as it now stands (after the prune above, never
  // before it), judged by the same function `assign` uses, with what `assign`
  // recorded of its decision. A record of an older generation or replica count
  // means `assign` has not caught up (or was refused): status is left to it.
  const assigned = configMap ? readAssigned(configMap.annotations) : undefined;
  if (assigned && assigned.generation === (obs.swarm.metadata.generation ?? 0) && assigned.replicas === statefulSet.replicas) {
    const config = configMap ? parsedConfig(configMap, valid.spec.configKey ?? 'config.yml') : undefined;
    const status = computeStatus({
      swarm: obs.swarm,
      now,
      statefulSet,
      ...(config ? { config } : {}),
      workspace: recorded,
      pods,
      unhonouredDedications: assigned.unhonoured,
    });
    carry.writes += await writeStatus(env, obs.swarm, status);
  }

  const result = decision.deletes.length ? 'restarting' : decision.outstanding.length ? 'waiting' : 'idle';
  return { key, result, outstanding: decision.outstanding, waiting: decision.waiting };
}

/**
 * config.yml parsed once per ConfigMap version: a Pod event finds the config
 * unchanged, and parsing is the costliest part of a no-op reconcile. A cache
 * of this instance keyed by uid + resourceVersion: an optimisation only (a miss
 * parses), bounded to the most recently used few.
 */
const parsedConfigs = new Map<string, WorkerConfig | undefined>();
const PARSED_CONFIGS_KEPT = 16;

function parsedConfig(configMap: ConfigMapView, key: string): WorkerConfig | undefined {
  const id = configMap.uid && configMap.resourceVersion ? `${configMap.uid}/${configMap.resourceVersion}/${key}` : undefined;
  if (id && parsedConfigs.has(id)) {
    const hit = parsedConfigs.get(id);
    parsedConfigs.delete(id);
    parsedConfigs.set(id, hit);
    return hit;
  }
  const config = parseOrUndefined(configMap.data[key]);
  if (id) {
    parsedConfigs.set(id, config);
    if (parsedConfigs.size > PARSED_CONFIGS_KEPT) parsedConfigs.delete(parsedConfigs.keys().next().value ?? '');
  }
  return config;
}

function parseOrUndefined(text: string | undefined): WorkerConfig | undefined {
  if (!text) return undefined;
  try {
    return parse(text);
  } catch {
    return undefined;
  }
}
