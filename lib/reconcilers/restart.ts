// ReconcileKind for `restart`: observe the restart workspace and, with steps to
// take, the Swarm's pods and what they acknowledge; delete the pods still
// holding an older share, in handoff order (each wait lasts until the awaited
// worker acknowledges its share) and within maxUnavailable (pure decision). It
// decides only restarts: it never re-runs the assignment, never writes the
// ConfigMap (assign forgets finished steps) and never writes status (assign
// owns every field of it), so the two functions never race for the same object.
import type { Swarm } from '../api/types.js';
import { foreignController } from '../decisions/configmap-ownership.js';
import { decideRestarts } from '../decisions/restarts.js';
import type { SwarmKey } from '../decisions/routing.js';
import { readRestarts } from '../decisions/workspace.js';
import { ANNOTATION_RESTARTING, liveIntents, mayStillDelete, readIntents, recordIntents } from '../decisions/restart-intents.js';
import type { ReconcileEnv } from './env.js';
import { SWARM_LABEL } from '../workerconfig/index.js';
import { cachedConfigReader, shortcutOn } from './shortcuts.js';
import { listWorkerPods, observe } from './observe.js';
import { reportPermanent } from './permanent.js';
import { retryOnConflict } from './retry.js';

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
    const refused = await reportPermanent(env, key, err, 'event-only');
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
  const obs = await observe(env, key, claimants, 'deferred');
  if (!obs) return { ...idle, result: 'gone' };
  if (obs.problem || !obs.valid) {
    // Problems of the spec and the StatefulSet are assign's to report; with no
    // valid spec and StatefulSet there is nothing to restart.
    return { ...idle, result: 'blocked', waiting: obs.problem?.message ?? 'unreadable Swarm' };
  }
  const { valid, configMap } = obs;
  // A ConfigMap controlled by something else holds no workspace of ours (assign reports the conflict).
  const other = configMap && foreignController(configMap, valid);
  if (other) return { ...idle, result: 'blocked', waiting: `ConfigMap ${configMap.name} is controlled by ${other.kind} ${other.name}` };

  // A Deployment pool hot-reloads (restart policy None, required by the schema): nothing is ever restarted.
  const stsName = valid.spec.statefulSetName;
  if (stsName === undefined) return { ...idle, result: 'idle' };
  const workspace = readRestarts(configMap?.annotations ?? {});
  // No step recorded: nothing to restart, and no pod to look at.
  if (workspace.steps.length === 0) return { ...idle, result: 'idle' };
  const [statefulSet, leases] = await Promise.all([
    env.kube.getStatefulSet(key.namespace, stsName),
    env.kube.listLeases(key.namespace, `${SWARM_LABEL}=${stsName}`),
  ]);
  if (!statefulSet) return { ...idle, result: 'blocked', waiting: `StatefulSet ${stsName} not found` };
  const pods = await listWorkerPods(env, statefulSet);
  // The shares in force, to judge what each pod acknowledges (parsed once per
  // ConfigMap version per instance); never re-assigned here.
  const { previous: config } = cachedConfigReader(configMap, shortcutOn(env.shortcuts, 'configCache'))(configMap?.data[valid.spec.configKey]);
  const now = env.now();
  const intents = liveIntents(readIntents(configMap?.annotations ?? {}), pods, now);
  const inFlight = new Set(intents.map((i) => i.uid));
  const decision = decideRestarts({ swarm: valid, statefulSet, workspace, pods, leases, inFlight, ...(config ? { config } : {}) });
  if (decision.deletes.length) {
    // The intent first, guarded by the version decided from: a concurrent restart meets a 409 (and reads again) or
    // reads it. A read with no version cannot guard one, so nothing is deleted on it.
    if (configMap?.resourceVersion === undefined) return { ...idle, result: 'waiting', waiting: 'the ConfigMap was read without a resourceVersion' };
    await env.kube.patchConfigMap({
      name: configMap.name,
      namespace: configMap.namespace,
      resourceVersion: configMap.resourceVersion,
      annotations: { [ANNOTATION_RESTARTING]: recordIntents(intents, decision.deletes, now) },
    });
    carry.writes += 1;
  }
  for (const pod of decision.deletes) {
    // Fenced by our own clock: an intent others may already have given up on is not acted on.
    if (!mayStillDelete(now, env.now())) {
      env.log.warn({ pod: pod.name }, 'restart intent expired before its delete; the next reconcile decides again');
      break;
    }
    const result = await env.kube.deletePod(pod.namespace, pod.name, { uid: pod.uid, resourceVersion: pod.resourceVersion });
    carry.writes += 1;
    if (result === 'deleted') {
      carry.restarted.push(pod.name);
      env.onPodRestart?.();
    }
    env.log.info({ pod: pod.name, uid: pod.uid, result }, 'restart');
  }
  const result = decision.deletes.length ? 'restarting' : decision.outstanding.length ? 'waiting' : 'idle';
  return { key, result, outstanding: decision.outstanding, waiting: decision.waiting };
}
