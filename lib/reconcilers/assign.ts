// ReconcileKind for `assign`: observe the Swarm, its StatefulSet, ConfigMap,
// pods and Leases, whole, for every event; decide the desired ConfigMap, the
// refresh hints for hot-reloading workers, the StatefulSet's size (with
// spec.replicas) and status (pure); write what differs, the ConfigMap first;
// after a status write, observe and decide once more (its echo is not
// reconciled, keys.ts).
import { poolOf, type PoolRef, type Swarm, type SwarmStatus } from '../api/types.js';
import { decideConfigMap } from '../decisions/configmap.js';
import { decideRefreshes, type Refresh } from '../decisions/refresh.js';
import { awaitedStatefulSet, decideScale, type ScaleDecision } from '../decisions/scale.js';
import { KubeError } from '../kube/errors.js';
import { CONFIG_REFRESH_ANNOTATION, isDeployment, type PoolView } from '../kube/types.js';
import type { SwarmKey } from '../decisions/routing.js';
import { computeStatus } from '../decisions/status.js';
import { readLastChange, readRestarts, type LastChange } from '../decisions/workspace.js';
import type { WorkerConfig } from '../workerconfig/index.js';
import type { ReconcileEnv } from './env.js';
import { rfc3339 } from './env.js';
import { cachedConfigReader, rememberWritten, shortcutOn } from './shortcuts.js';
import { boundedAll } from './bounded.js';
import { observe } from './observe.js';
import { reportPermanent } from './permanent.js';
import { retryOnConflict } from './retry.js';
import { writeStatus } from './status-writer.js';

export interface AssignOutcome {
  key: SwarmKey;
  result: 'gone' | 'invalid' | 'blocked' | 'unchanged' | 'changed';
  /** Why, when blocked or invalid. */
  reason?: string;
  message?: string;
  swarmUid?: string;
  version?: number;
  changedWorkers: string[];
  moved: number;
  /** Size of the assignment in force after this reconcile (for the gauges; absent when none was decided). */
  size?: { workers: number; jobs: number };
  /** API writes made by this reconcile (0 for a no-op). */
  writes: number;
  /**
   * Restarts are outstanding (steps in the restart bookkeeping): tell `restart`,
   * which hears of them only this way. True on every reconcile while they are,
   * so a notification lost after an earlier write is sent again (the resync
   * ping brings a next reconcile); never under policy None, which records no steps.
   */
  notify: boolean;
}

/** `claimants`: the Swarms listed for this event (keys.ts), used by the first attempt only. */
export async function reconcileAssign(env: ReconcileEnv, key: SwarmKey, claimants?: readonly Swarm[]): Promise<AssignOutcome> {
  // Carried across conflict retries and confirming looks: a change written by
  // an attempt whose status write then conflicted is still this reconcile's change.
  const carry: Carry = { writes: 0, statusWritten: false };
  const what = `assign ${key.namespace}/${key.name}`;
  let outcome: AssignOutcome;
  try {
    outcome = await retryOnConflict(env, what, (n) => assignOnce(env, key, carry, n === 1 ? claimants : undefined));
    // A status write is judged from reads another instance may have outrun: it
    // saw a later change first, found the status before this write already
    // agreeing, and wrote nothing. The write's echo is not reconciled (keys.ts),
    // so the writer looks once more, afresh, after its write landed.
    for (let round = 0; carry.statusWritten && round < CONFIRMATIONS; round++) {
      // As for an event: the Swarms naming the pool it names are its read and its claim check.
      const pool = carry.pool;
      const naming = pool ? await env.kube.listSwarmsNaming(key.namespace, pool.name, pool.kind) : undefined;
      outcome = await retryOnConflict(env, what, (n) => assignOnce(env, key, carry, n === 1 ? naming : undefined));
    }
  } catch (err) {
    const refused = await reportPermanent(env, key, err);
    if (!refused) throw err;
    // A change written before the refusal is still announced (its bookkeeping
    // unread here: at worst `restart` wakes to find nothing to do).
    const published = carry.published;
    return {
      key,
      result: 'blocked',
      reason: refused.reason,
      message: refused.message,
      changedWorkers: published?.changedWorkers ?? [],
      moved: published?.moved ?? 0,
      writes: carry.writes + refused.writes,
      notify: !!published,
      ...(published ? { swarmUid: published.swarmUid, version: published.version } : {}),
    };
  }
  // A change written by an earlier attempt, or before the confirming look, is still this reconcile's.
  const published = carry.published;
  if (!published) return { ...outcome, writes: carry.writes };
  return {
    ...outcome,
    ...(outcome.result === 'unchanged' ? { result: 'changed' as const, changedWorkers: published.changedWorkers, moved: published.moved } : {}),
    ...(outcome.version === undefined ? { version: published.version } : {}),
    ...(outcome.size === undefined && published.size ? { size: published.size } : {}),
    writes: carry.writes,
  };
}

type ConfigMapConverge = Extract<ReturnType<typeof decideConfigMap>, { kind: 'converge' }>;

interface Carry {
  writes: number;
  /** The last attempt wrote status (the reconcile then confirms it). */
  statusWritten: boolean;
  /** The pool the last attempt's valid Swarm named. */
  pool?: PoolRef;
  published?: Published;
}

interface Published {
  changedWorkers: string[];
  moved: number;
  swarmUid: string;
  version: number;
  size?: AssignOutcome['size'];
}

/** A later write in the same reconcile (a retry, a confirming look) adds to what it announces. */
const publish = (before: Published | undefined, now: Published): Published =>
  before ? { ...now, changedWorkers: [...new Set([...before.changedWorkers, ...now.changedWorkers])], moved: before.moved + now.moved } : now;

/** Observations after a status write, at most (each one that writes status again asks for the next). */
const CONFIRMATIONS = 2;

async function assignOnce(env: ReconcileEnv, key: SwarmKey, carry: Carry, claimants: readonly Swarm[] | undefined): Promise<AssignOutcome> {
  const none = { key, changedWorkers: [], moved: 0, writes: 0, notify: false };
  carry.statusWritten = false;
  const statusWrite = async (swarm: Swarm, status: SwarmStatus): Promise<void> => {
    const writes = await writeStatus(env, swarm, status);
    carry.writes += writes;
    carry.statusWritten = writes > 0;
  };
  const obs = await observe(env, key, claimants, 'workers');
  if (!obs) return { ...none, result: 'gone' };
  if (obs.valid) carry.pool = poolOf(obs.valid.spec);
  const now = rfc3339(env.now());
  const uid = obs.swarm.metadata.uid;

  if (obs.problem || !obs.valid || !obs.statefulSet) {
    const problem = obs.problem ?? { reason: 'InvalidSpec' as const, message: 'unreadable Swarm' };
    // A Swarm that owns its count names its workers before their StatefulSet
    // exists: their first config is written now, so its pods start with their shares.
    const awaited = problem.reason === 'StatefulSetNotFound' && obs.valid ? awaitedStatefulSet(obs.valid, key.namespace, !!obs.configMap) : undefined;
    const ahead = awaited && obs.valid ? decideConfigMap({ swarm: obs.valid, statefulSet: awaited, configMap: undefined, pods: [], leases: [], now }) : undefined;
    const first = ahead?.kind === 'converge' && ahead.write === 'create' ? ahead : undefined;
    if (first && obs.valid) {
      await writeConfigMap(env, carry, first, obs.valid.spec.configKey);
      carry.published = publish(carry.published, { changedWorkers: first.changedWorkers, moved: first.moves.length, swarmUid: uid ?? '', version: first.config.version, size: sizeOf(first.config) });
    }
    await statusWrite(obs.swarm, computeStatus({ swarm: obs.swarm, now, problem, pods: [], ...(first ? { config: first.config } : {}) }));
    return {
      ...none,
      result: problem.reason === 'InvalidSpec' ? 'invalid' : 'blocked',
      reason: problem.reason,
      message: problem.message,
      ...(uid ? { swarmUid: uid } : {}),
      ...(first ? { version: first.config.version, size: sizeOf(first.config) } : {}),
    };
  }

  // Status judges coverage from the pods and their acknowledgements, so assign always reads them.
  const read = cachedConfigReader(obs.configMap, shortcutOn(env.shortcuts, 'configCache'));
  const { pods, leases } = obs.workers ?? { pods: [], leases: [] };
  const decision = decideConfigMap({ swarm: obs.valid, statefulSet: obs.statefulSet, configMap: obs.configMap, pods, leases, now }, read);
  // Another instance wrote the config from a newer spec after this one read the Swarm: read again, as for a 409.
  if (decision.kind === 'stale') throw new KubeError('Conflict', 409, decision.message, `GET swarms ${key.namespace}/${key.name}`, 'GET');
  if (decision.kind === 'blocked') {
    const problem = { reason: decision.reason, message: decision.message };
    await statusWrite(obs.swarm, computeStatus({ swarm: obs.swarm, now, problem, statefulSet: obs.statefulSet, pods }));
    return { ...none, result: 'blocked', reason: decision.reason, message: decision.message, ...(uid ? { swarmUid: uid } : {}) };
  }

  if (decision.write !== 'none') {
    await writeConfigMap(env, carry, decision, obs.valid.spec.configKey);
    if (decision.malformedPrevious) env.log.warn({ problem: decision.malformedPrevious }, 'replaced a malformed worker config');
    if (decision.changed) {
      carry.published = publish(carry.published, { changedWorkers: decision.changedWorkers, moved: decision.moves.length, swarmUid: uid ?? '', version: decision.config.version });
    }
  }

  // Hot-reloading workers are asked to load it now, not at the kubelet's next sync.
  carry.writes += await requestRefreshes(
    env,
    obs.statefulSet.namespace,
    decideRefreshes({ policy: obs.valid.spec.restart.policy, pool: obs.statefulSet, config: decision.config, pods, leases }),
  );

  // Resized only after the config over the target count is in force (above):
  // a new pod starts with its share there, a departing one leaves once covered.
  const workspace = readRestarts(decision.configMap.annotations);
  const scale = decideScale({
    desired: obs.valid.spec.replicas,
    handoff: obs.valid.spec.restart.handoff,
    statefulSet: obs.statefulSet,
    jobs: obs.valid.spec.workload.jobs,
    config: decision.config,
    workspace,
    pods,
    leases,
  });
  if (scale.kind === 'scale') {
    await resizeStatefulSet(env, obs.statefulSet, scale);
    carry.writes += 1;
  } else if (scale.waiting) env.log.debug({ waiting: scale.waiting }, 'resize waits');

  const status = computeStatus({
    swarm: obs.swarm,
    now,
    statefulSet: obs.statefulSet,
    config: decision.config,
    workers: decision.workers,
    ...(decision.members ? { members: decision.members } : {}),
    workspace,
    ...withWrittenAt(readLastChange(decision.configMap.annotations)),
    pods,
    unhonouredDedications: decision.unhonoured.length,
    leases,
  });
  await statusWrite(obs.swarm, status);

  // "changed" only when this reconcile wrote the change; one that finds it
  // already written by another instance reports "unchanged".
  const published = decision.changed && decision.write !== 'none';
  return {
    ...none,
    result: published ? 'changed' : 'unchanged',
    ...(uid ? { swarmUid: uid } : {}),
    version: decision.config.version,
    changedWorkers: published ? decision.changedWorkers : [],
    moved: published ? decision.moves.length : 0,
    size: sizeOf(decision.config),
    notify: workspace.steps.length > 0,
  };
}

/**
 * Creates or merge-patches the decided ConfigMap and counts the write. The
 * config written is remembered for the version the write returned: the look
 * confirming this reconcile's status write, and the write's echo, find it parsed.
 */
async function writeConfigMap(env: ReconcileEnv, carry: Carry, decision: ConfigMapConverge, configKey: string): Promise<void> {
  const written = decision.write === 'create' ? await env.kube.createConfigMap(decision.configMap) : decision.patch ? await env.kube.patchConfigMap(decision.patch) : undefined;
  carry.writes += 1;
  env.onConfigMapWrite?.();
  const text = decision.configMap.data[configKey];
  if (written && text !== undefined && shortcutOn(env.shortcuts, 'configCache')) rememberWritten(written, configKey, text, decision.config);
}

/**
 * PUT on the StatefulSet's scale subresource, guarded twice: the replicas read
 * now must still be the ones decided from (else someone resized it meanwhile:
 * a conflict, so the reconcile re-reads), and the write carries the Scale's
 * resourceVersion.
 */
async function resizeStatefulSet(env: ReconcileEnv, statefulSet: PoolView, decision: Extract<ScaleDecision, { kind: 'scale' }>): Promise<void> {
  const { namespace, name } = statefulSet;
  // A Deployment pool is resized through its own scale subresource, guarded alike.
  const deployment = isDeployment(statefulSet);
  const kind = deployment ? 'Deployment' : 'StatefulSet';
  const operation = `UPDATE ${deployment ? 'deployments' : 'statefulsets'}/scale ${namespace}/${name}`;
  const current = await (deployment ? env.kube.getDeploymentScale(namespace, name) : env.kube.getStatefulSetScale(namespace, name));
  if (!current) throw new KubeError('Conflict', 409, `${kind} ${namespace}/${name} is gone`, operation, 'UPDATE');
  if (current.replicas !== decision.from) {
    throw new KubeError('Conflict', 409, `${kind} ${namespace}/${name} was resized to ${current.replicas} meanwhile`, operation, 'UPDATE');
  }
  await (deployment ? env.kube.replaceDeploymentScale({ ...current, replicas: decision.to }) : env.kube.replaceStatefulSetScale({ ...current, replicas: decision.to }));
  env.log.info({ [deployment ? 'deployment' : 'statefulSet']: name, from: decision.from, to: decision.to, reason: decision.reason }, `resized the ${kind}`);
}

/** Refresh annotations in flight at once: a resize asks a few pods, a first assignment at most every pod. */
const REFRESH_CONCURRENCY = 4;

/**
 * Writes the refresh annotations, a few at a time; returns how many were
 * written. A hint never fails the reconcile: a pod that changed or went
 * meanwhile is skipped (whatever changed it brings another event), and a
 * refusal (RBAC without `patch pods`, the admission policy, a transient
 * error) is logged and leaves that worker on the kubelet's own schedule.
 */
async function requestRefreshes(env: ReconcileEnv, namespace: string, refreshes: readonly Refresh[]): Promise<number> {
  const failures: string[] = [];
  const outcomes = await boundedAll(
    refreshes.map((r) => () =>
      env.kube
        .annotatePod(namespace, r.pod, { uid: r.uid, resourceVersion: r.resourceVersion }, { [CONFIG_REFRESH_ANNOTATION]: String(r.version) })
        .catch((err: unknown) => {
          failures.push(`${r.pod}: ${err instanceof Error ? err.message : String(err)}`);
          return 'failed' as const;
        }),
    ),
    REFRESH_CONCURRENCY,
  );
  const written = outcomes.filter((o) => o === 'annotated').length;
  if (failures.length > 0) env.log.warn({ failures }, 'could not ask kubelets to refresh the config; the workers get it at their next sync');
  else if (refreshes.length > 0) env.log.debug({ asked: refreshes.map((r) => r.pod), written }, 'asked kubelets to refresh the config');
  return written;
}

function sizeOf(config: WorkerConfig): { workers: number; jobs: number } {
  const workloads = Object.values(config.workloads);
  return { workers: workloads.length, jobs: workloads.reduce((sum, w) => sum + w.jobs.length, 0) };
}

/** The write of the config in force, for status (blocked-since, the shares before it). */
const withWrittenAt = (change: LastChange | undefined) =>
  change
    ? {
        lastChange: {
          version: change.version,
          ...(change.at ? { at: change.at } : {}),
          ...(change.moves.length === change.movedTotal ? { moves: change.moves } : {}),
        },
      }
    : {};
