// ReconcileKind for `assign`: an event's own object is first glanced at
// against what status was judged from (glance.ts); otherwise observe the
// Swarm, its StatefulSet, ConfigMap, pods and Leases; decide the desired
// ConfigMap, the refresh hints for hot-reloading workers, the StatefulSet's
// size (with spec.replicas) and status with digests of what it read (pure);
// write what differs, the ConfigMap first; after a status write, observe and
// decide once more (its echo is not reconciled, keys.ts). A last look that
// finds nothing to do is remembered by the versions it read (settled.ts).
import { poolOf, type PoolRef, type Swarm, type SwarmStatus } from '../api/types.js';
import { decideConfigMap } from '../decisions/configmap.js';
import { decideRefreshes, type Refresh } from '../decisions/refresh.js';
import { awaitedStatefulSet, decideScale, type ScaleDecision } from '../decisions/scale.js';
import { KubeError } from '../kube/errors.js';
import { CONFIG_REFRESH_ANNOTATION, isDeployment, type ConfigMapView, type PoolView } from '../kube/types.js';
import { observedDigests, type Aspect } from '../decisions/observed.js';
import type { SwarmKey } from '../decisions/routing.js';
import { computeStatus, judgeStatus } from '../decisions/status.js';
import { readLastChange, readRestarts, type LastChange } from '../decisions/workspace.js';
import type { WorkerConfig } from '../workerconfig/index.js';
import type { ReconcileEnv } from './env.js';
import { rfc3339 } from './env.js';
import { cachedConfigReader, rememberWritten } from './config-cache.js';
import { boundedAll } from './bounded.js';
import { glance, type Glimpsed } from './glance.js';
import { observe, type Observation } from './observe.js';
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
  /** Answered by a glance (glance.ts): three reads at most, the status found to describe the world. */
  glanced?: true;
}

/**
 * `claimants`: the Swarms listed for this event (keys.ts), used by the first attempt only.
 * `aspect`: the object the event is about, glanced at first (glance.ts); absent (a resync,
 * a coalesced follow-up): the whole look.
 */
export async function reconcileAssign(env: ReconcileEnv, key: SwarmKey, claimants?: readonly Swarm[], aspect?: Aspect | 'swarm'): Promise<AssignOutcome> {
  let glimpsed: Glimpsed = {};
  if (aspect) {
    // A glance that fails leaves it to the whole look, which meets the failure again and answers it.
    const seen = await glance(env, key, claimants, aspect).catch(() => undefined);
    if (seen?.agrees) {
      // Found nothing to do: its versions vouch for their redeliveries (settled.ts); not while each event must tell restart.
      if (!seen.restartsDue) env.settled?.note(key, seen.read.pool, seen.read.versions, seen.read.until);
      return glanced(key, seen.swarm, seen.restartsDue);
    }
    if (seen) ({ claimants, glimpsed } = seen);
  }
  // Carried across conflict retries and confirming looks: a change written by
  // an attempt whose status write then conflicted is still this reconcile's change.
  const carry: Carry = { writes: 0, statusWritten: false };
  const what = `assign ${key.namespace}/${key.name}`;
  let outcome: AssignOutcome;
  try {
    outcome = await retryOnConflict(env, what, (n) => assignOnce(env, key, carry, n === 1 ? claimants : undefined, n === 1 ? glimpsed : {}));
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
    // The last look found nothing to do: events announcing what it read need no reads (settled.ts).
    if (carry.settled) env.settled?.remember(key, carry.settled.obs, carry.settled.until);
    else env.settled?.forget(key);
  } catch (err) {
    env.settled?.forget(key);
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
  /** The last attempt's observation, when it found nothing to do (nothing written, refreshed, resized or recorded), and until when time changes nothing. */
  settled?: { obs: Observation; until?: string };
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

async function assignOnce(env: ReconcileEnv, key: SwarmKey, carry: Carry, claimants: readonly Swarm[] | undefined, glimpsed: Glimpsed = {}): Promise<AssignOutcome> {
  const none = { key, changedWorkers: [], moved: 0, writes: 0, notify: false };
  carry.statusWritten = false;
  carry.settled = undefined;
  const statusWrite = async (swarm: Swarm, status: SwarmStatus): Promise<void> => {
    const writes = await writeStatus(env, swarm, status);
    carry.writes += writes;
    carry.statusWritten = writes > 0;
  };
  const obs = await observe(env, key, claimants, 'workers', glimpsed);
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
  const read = cachedConfigReader(obs.configMap);
  const { pods, leases } = obs.workers ?? { pods: [], leases: [] };
  const decision = decideConfigMap({ swarm: obs.valid, statefulSet: obs.statefulSet, configMap: obs.configMap, pods, leases, now }, read);
  if (decision.kind === 'blocked') {
    const problem = { reason: decision.reason, message: decision.message };
    await statusWrite(obs.swarm, computeStatus({ swarm: obs.swarm, now, problem, statefulSet: obs.statefulSet, pods }));
    return { ...none, result: 'blocked', reason: decision.reason, message: decision.message, ...(uid ? { swarmUid: uid } : {}) };
  }

  // The ConfigMap as status is judged from: as written, else as read.
  let configMapNow = obs.configMap;
  if (decision.write !== 'none') {
    configMapNow = (await writeConfigMap(env, carry, decision, obs.valid.spec.configKey)) ?? obs.configMap;
    if (decision.malformedPrevious) env.log.warn({ problem: decision.malformedPrevious }, 'replaced a malformed worker config');
    if (decision.changed) {
      carry.published = publish(carry.published, { changedWorkers: decision.changedWorkers, moved: decision.moves.length, swarmUid: uid ?? '', version: decision.config.version });
    }
  }

  // Hot-reloading workers are asked to load it now, not at the kubelet's next sync.
  const refreshes = decideRefreshes({ policy: obs.valid.spec.restart.policy, pool: obs.statefulSet, config: decision.config, pods, leases });
  carry.writes += await requestRefreshes(env, obs.statefulSet.namespace, refreshes);

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

  const { status, changesAt } = judgeStatus({
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
    observed: observedDigests({ pool: obs.statefulSet, pods, leases, configMap: configMapNow }),
  });
  await statusWrite(obs.swarm, status);
  // Waiting only on the world (a worker's acknowledgement, a pod Ready) or a deadline: settled (settled.ts).
  // Not while restarts are recorded: each reconcile then tells `restart` again.
  const settled = decision.write === 'none' && refreshes.length === 0 && scale.kind !== 'scale' && workspace.steps.length === 0 && !carry.statusWritten;
  if (settled) carry.settled = { obs, ...(changesAt ? { until: changesAt } : {}) };

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
async function writeConfigMap(env: ReconcileEnv, carry: Carry, decision: ConfigMapConverge, configKey: string): Promise<ConfigMapView | undefined> {
  const written = decision.write === 'create' ? await env.kube.createConfigMap(decision.configMap) : decision.patch ? await env.kube.patchConfigMap(decision.patch) : undefined;
  carry.writes += 1;
  env.onConfigMapWrite?.();
  const text = decision.configMap.data[configKey];
  if (written && text !== undefined) rememberWritten(written, configKey, text, decision.config);
  return written;
}

/**
 * A glance that found the world status describes: nothing to write, answered
 * from status (the version in force, the gauges' size: its workers' shares),
 * telling `restart` again while restarts are recorded, as every look does.
 */
function glanced(key: SwarmKey, swarm: Swarm, restartsDue: boolean): AssignOutcome {
  const workers = swarm.status?.workers ?? [];
  return {
    key,
    result: 'unchanged',
    ...(swarm.metadata.uid ? { swarmUid: swarm.metadata.uid } : {}),
    ...(swarm.status?.version !== undefined ? { version: swarm.status.version } : {}),
    changedWorkers: [],
    moved: 0,
    size: { workers: workers.length, jobs: workers.reduce((sum, w) => sum + w.jobs, 0) },
    writes: 0,
    notify: restartsDue && swarm.status?.version !== undefined,
    glanced: true,
  };
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

/** The write of the config in force, for status (blocked-since, inference from start times, the shares before it). */
const withWrittenAt = (change: LastChange | undefined) =>
  change
    ? {
        lastChange: {
          version: change.version,
          ...(change.at ? { at: change.at } : {}),
          ...(change.unpinned ? { unpinned: change.unpinned } : {}),
          ...(change.moves.length === change.movedTotal ? { moves: change.moves } : {}),
        },
      }
    : {};
