// The assign function's decision: the desired worker ConfigMap for a Swarm,
// built from the spec, the worker count (spec.replicas, else the StatefulSet's
// replicas: lib/decisions/scale.ts), the StatefulSet's start ordinal and the
// ConfigMap as it is now (its current assignment is the sticky input of the assigner, and its
// annotations are the restart workspace). Pure: observations in, decision out.
import { KUBERNETES_LIMITS, LIMITS } from '../api/schema.js';
import { API_VERSION, KIND, type Swarm, type ValidSwarm } from '../api/types.js';
import { assign } from '../assignment/index.js';
import type { AssignInput, AssignResult, Assignment, UnhonouredDedication } from '../assignment/types.js';
import { isDeployment, type ConfigMapPatch, type ConfigMapView, type DeploymentView, type OwnerReference, type PodView, type PoolView } from '../kube/types.js';
import { diff, restartOrder, type AssignmentDiff, type Move } from '../plan/index.js';
import { HANDOVER_ANNOTATION, HANDOVER_VALUE, SWARM_LABEL, assignmentOf, nextConfig, parse, render, type HandoffMarks, type LeaseLike, type WorkerConfig } from '../workerconfig/index.js';
import { jsonEqual } from './equal.js';
import { deploymentWorkers, inheritShares, workerIndex, type DeploymentWorkers } from '../assignment/workers.js';
import { stepState, workerFacts, type WorkerFacts } from './restarts.js';
import { isServing, podsOfPool, poolWorkerNames } from './workers.js';
import { inCustody, stageHandoff } from './handoff.js';
import { unverifiable, type WrittenAt } from './coverage.js';
import { workerCount } from './scale.js';
import {
  LABEL_MANAGED_BY,
  MANAGED_BY,
  readLastChange,
  readRestarts,
  withLastChange,
  withRestarts,
  type RecordedStep,
  type RestartWorkspace,
} from './workspace.js';

export interface AssignObservation {
  /** Validated, defaults applied. */
  swarm: ValidSwarm;
  /** The pool: a StatefulSet, or a Deployment (its workers: deploymentWorkers). */
  statefulSet: PoolView;
  configMap: ConfigMapView | undefined;
  pods: readonly PodView[];
  /** The workers' acknowledgement Leases: a pod that acknowledges another share than its own is restarted. */
  leases?: readonly LeaseLike[];
  /** RFC 3339, recorded with a new config version as the time it was written. */
  now?: string;
}

export type BlockedReason = 'ConfigMapConflict' | 'ConfigMapTooLarge' | 'TooManyWorkers';

type AssignDecision =
  | { kind: 'blocked'; reason: BlockedReason; message: string }
  | {
      kind: 'converge';
      /** What to do with the API: nothing when the observed ConfigMap already is the desired one. */
      write: 'create' | 'update' | 'none';
      /** The ConfigMap as it should be (foreign labels, annotations, data and owners kept). */
      configMap: ConfigMapView;
      /** For an update: only the fields Swarm changes, guarded by the resourceVersion read. */
      patch?: ConfigMapPatch;
      config: WorkerConfig;
      /** How many workers the config assigns over (from the StatefulSet's start ordinal). */
      workers: number;
      /** A Deployment pool's workers (pod names) for this reconcile. */
      members?: string[];
      /** The assignment changed (the config version was bumped). */
      changed: boolean;
      changedWorkers: string[];
      moves: Move[];
      unhonoured: readonly UnhonouredDedication[];
      /** Set when the config found in the ConfigMap could not be parsed (it is replaced). */
      malformedPrevious?: string;
    };

const ownerReferenceTo = (swarm: Swarm): OwnerReference => ({
  apiVersion: API_VERSION,
  kind: KIND,
  name: swarm.metadata.name,
  uid: swarm.metadata.uid ?? '',
  controller: true,
});

/** The controller owner of a ConfigMap, when it is something other than this Swarm. */
export function foreignController(configMap: ConfigMapView, swarm: Swarm): OwnerReference | undefined {
  return configMap.ownerReferences.find((o) => o.controller && o.uid !== swarm.metadata.uid);
}

/** config.yml as found in a ConfigMap: parsed, and `rendered` the text Swarm writes for it (computed on demand). */
export interface ConfigRead {
  previous?: WorkerConfig;
  /** Set when the text could not be parsed (it is replaced). */
  malformed?: string;
  rendered?: () => string;
  /** Who owns what in `previous` (assignmentOf), computed on demand, once per read. */
  assignment?: () => Assignment;
}

/**
 * The assigner (lib/assignment's `assign`). Pure; the assign reconciler passes
 * one that remembers its answer over a remembered config for the same Swarm
 * spec and worker count (config-cache.ts), the decision is the same either way.
 */
export type Assigner = (input: AssignInput) => AssignResult;

/**
 * Reads config.yml. Pure; the assign reconciler passes one that remembers its
 * answer per ConfigMap uid+resourceVersion (parsing thousands of jobs is the
 * costliest step of a no-op reconcile), the decision is the same either way.
 */
export type ConfigReader = (text: string | undefined) => ConfigRead;

export const readConfig: ConfigReader = (text) => {
  // A placeholder ConfigMap (no key, or an empty document) is a first assignment.
  if (text === undefined || text.trim() === '' || text.trim() === '{}') return {};
  let previous: WorkerConfig;
  try {
    previous = parse(text);
  } catch (err) {
    return { malformed: err instanceof Error ? err.message : String(err) };
  }
  let rendered: string | undefined;
  let assignment: Assignment | undefined;
  return { previous, rendered: () => (rendered ??= render(previous)), assignment: () => (assignment ??= assignmentOf(previous)) };
};

export function decideConfigMap(obs: AssignObservation, read: ConfigReader = readConfig, assigner: Assigner = assign): AssignDecision {
  const { swarm, statefulSet, configMap } = obs;
  const spec = swarm.spec;
  const key = spec.configKey;

  if (configMap) {
    const other = foreignController(configMap, swarm);
    if (other) {
      return {
        kind: 'blocked',
        reason: 'ConfigMapConflict',
        message: `ConfigMap ${configMap.name} is controlled by ${other.kind} ${other.name} (uid ${other.uid}), not by this Swarm`,
      };
    }
  }

  const { previous, malformed, rendered, assignment } = read(configMap?.data[key]);
  const pool = isDeployment(statefulSet) ? deploymentPool(previous, statefulSet, spec.replicas, obs.pods) : undefined;
  const workers = pool ? pool.workers.length : workerCount({
    desired: spec.replicas,
    handoff: spec.restart.handoff,
    statefulSet,
    configWorkers: previous ? Object.keys(previous.workloads).length : undefined,
    pods: obs.pods,
  });
  if (workers > LIMITS.maxWorkers) {
    return {
      kind: 'blocked',
      reason: 'TooManyWorkers',
      message: `${isDeployment(statefulSet) ? 'Deployment' : 'StatefulSet'} ${statefulSet.name} has ${count(workers)} replicas; a Swarm manages at most ${count(LIMITS.maxWorkers)}`,
    };
  }

  // The last version published, as status recorded it: a ConfigMap deleted or
  // garbled by hand cannot take versions backwards, and its workers are restarted.
  const floor = swarm.status?.version ?? 0;
  const lost = previous === undefined ? floor > 0 : previous.version < floor;
  const previousAssignment = previous ? (assignment?.() ?? assignmentOf(previous)) : undefined;
  // A Deployment's new pod takes its predecessor's share as it stands: the assigner keeps it in place.
  const sticky = previousAssignment && pool ? inheritShares(previousAssignment, pool.successors) : previousAssignment;
  const result = assigner({
    statefulSetName: statefulSet.name,
    replicas: workers,
    ...(statefulSet.startOrdinal ? { startOrdinal: statefulSet.startOrdinal } : {}),
    ...(pool ? { workers: pool.workers } : {}),
    jobs: spec.workload.jobs,
    ...(sticky ? { previous: sticky } : {}),
  });
  const leases = obs.leases ? { leases: obs.leases } : {};
  // Hot-reloading workers hand jobs over through the config itself (handoff.ts),
  // judged by what each pod acknowledges of the config in force. Every pod the
  // config in force gives jobs may still run them: a StatefulSet shrunk by hand
  // (`kubectl scale sts`) still has its departing pods until they stop.
  const holders = Math.max(statefulSet.replicas, previous ? Object.keys(previous.workloads).length : 0);
  const facts0 = workerFacts({ statefulSet, workers: holders, pods: obs.pods, ...(previous ? { config: previous } : {}), ...leases, anyOrdinal: true });
  // A worker restarted to load (policy Restart) still runs its older share while its pinned pod lives.
  const pinnedBefore = readRestarts(configMap?.annotations ?? {}).steps;
  const held =
    spec.restart.policy === 'None'
      ? facts0
      : (worker: string): WorkerFacts => {
          const f = facts0(worker);
          const step = pinnedBefore.find((st) => st.worker === worker);
          return step && stepState(step, f) !== 'done' ? { ...f, restartPending: true } : f;
        };
  // A StatefulSet pod replaced under its own name, or any crash-looping worker, has its jobs run by its peers meanwhile (handoff.ts inCustody).
  const custody = spec.restart.handoff === 'MakeBeforeBreak' ? inCustody(result.assignment, previous, held, { replacesUnderOwnName: !pool }) : undefined;
  const target = custody?.target ?? result.assignment;
  // The config in force lost (deleted or garbled by hand) under break-before-make: what each pod runs is
  // unknown, so nobody gains a job until every live pod acknowledges a share of none (recoverBreakingFirst).
  const staged =
    lost && spec.restart.handoff === 'BreakBeforeMake' ? recoverBreakingFirst(target) : stageHandoff({ handoff: spec.restart.handoff, previous, target, facts: held });
  const config = nextConfig(previous, staged.jobs, { marks: staged.marks, floor });
  const changed = config !== previous;
  // What moved, only when something did (a no-op reconcile skips the diff).
  const plan = changed ? diff(previousAssignment ?? {}, target) : undefined;
  // A handoff's later stage publishes no new owner: the last change stays the one that moved jobs.
  const moved = plan && (plan.moves.length > 0 || plan.addedWorkers.length > 0 || plan.removedWorkers.length > 0);

  let annotations = { ...(configMap?.annotations ?? {}) };
  // Read by a StatefulSet's stopping workers only: a Deployment's hands over to its successor whatever this says.
  if (custody?.handover && !pool) annotations[HANDOVER_ANNOTATION] = HANDOVER_VALUE;
  else delete annotations[HANDOVER_ANNOTATION];
  // Judged against the shares being written: what each live pod acknowledges.
  const facts = workerFacts({ statefulSet, workers, pods: obs.pods, config, ...leases });
  const recorded = readRestarts(annotations);
  // The previous config lost: what any pod loaded is unknown, so every live pod is restarted.
  // Restart-only workers load what is published to them only by restarting: a worker
  // whose published jobs changed (a staged job added, say) is restarted like a changed one.
  const republished =
    plan && previous && spec.restart.policy === 'Restart'
      ? Object.keys(config.workloads).filter((w) => !sameJobs(previous.workloads[w]?.jobs, config.workloads[w]?.jobs))
      : [];
  const unknown = plan ? [...new Set([...(lost ? poolWorkerNames(statefulSet, workers, pool?.workers) : []), ...republished])] : [];
  // Restart bookkeeping, only for workers that are restarted to reload. Finished
  // steps are forgotten here, in assign's own guarded write (restart never
  // writes the ConfigMap), so status is judged from live bookkeeping only.
  const restarts: RestartWorkspace =
    spec.restart.policy !== 'Restart'
      ? { version: config.version, steps: [] }
      : plan
        ? restartWorkspace(recorded, plan, spec.restart.handoff, { statefulSet, workers, facts }, config.version, unknown)
        : { version: recorded.version, steps: withUnacknowledged(pendingSteps(recorded.steps, facts), { statefulSet, workers, facts }, unverifiableIn(config, readLastChange(annotations))) };
  if (plan || !jsonEqual(restarts.steps, recorded.steps)) annotations = withRestarts(annotations, restarts);
  if (moved) {
    // Workers whose share changed with no pod pinned for a restart (none was listed):
    // a pod of theirs may have mounted the older share, so status infers that a
    // worker which cannot acknowledge runs it only from its start time (coverage.ts).
    // Hot-reloading workers never restart to load a share: none are judged so.
    const pinned = new Set(restarts.steps.map((s) => s.worker));
    const unpinned = spec.restart.policy === 'Restart' ? { unpinned: [...new Set([...plan.changedWorkers, ...unknown])].filter((w) => !pinned.has(w)) } : {};
    annotations = withLastChange(annotations, { version: config.version, moves: plan.moves, ...(obs.now ? { at: obs.now } : {}), ...unpinned });
  }

  const desired: ConfigMapView = {
    name: spec.configMapName,
    namespace: swarm.metadata.namespace,
    ...(configMap?.uid ? { uid: configMap.uid } : {}),
    ...(configMap?.resourceVersion ? { resourceVersion: configMap.resourceVersion } : {}),
    labels: { ...(configMap?.labels ?? {}), [SWARM_LABEL]: swarm.metadata.name, [LABEL_MANAGED_BY]: MANAGED_BY },
    annotations,
    ownerReferences: withOwner(configMap?.ownerReferences ?? [], ownerReferenceTo(swarm)),
    data: { ...(configMap?.data ?? {}), [key]: config === previous && rendered ? rendered() : render(config) },
    ...(configMap?.binaryData ? { binaryData: configMap.binaryData } : {}),
  };

  const patch = configMap ? configMapPatch(configMap, desired) : undefined;
  const write = !configMap ? 'create' : patch ? 'update' : 'none';
  if (write !== 'none') {
    // Refuse before sending: the API server would answer 422 and nothing would change.
    const tooLarge = sizeProblem(desired, key);
    if (tooLarge) return { kind: 'blocked', reason: 'ConfigMapTooLarge', message: tooLarge };
  }
  return {
    kind: 'converge',
    write,
    configMap: desired,
    ...(patch ? { patch } : {}),
    config,
    workers,
    ...(pool ? { members: pool.workers } : {}),
    changed,
    changedWorkers: plan ? [...plan.changedWorkers] : [],
    moves: plan ? plan.moves.map((m) => ({ job: m.job, from: m.from, to: m.to })) : [],
    unhonoured: result.unhonouredDedications,
    ...(malformed ? { malformedPrevious: malformed } : {}),
  };
}

const sameJobs = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((j, i) => j === (b ?? [])[i]);

/**
 * Break-before-make when the config in force is lost: every job awaits its
 * owner, published to nobody; the staging then adds each job once every live
 * pod acknowledges its empty share (handoff.ts breakBeforeMake, `awaiting`).
 */
function recoverBreakingFirst(target: Assignment): { jobs: Assignment; marks: HandoffMarks } {
  const jobs: Record<string, string[]> = {};
  const marks: Record<string, { awaiting: string[] }> = {};
  for (const [worker, owns] of Object.entries(target)) {
    jobs[worker] = [];
    if (owns.length > 0) marks[worker] = { awaiting: [...owns] };
  }
  return { jobs, marks };
}

/**
 * A Deployment pool's workers now: spec.replicas (else the Deployment's own)
 * places, filled from the config's workers and the Deployment's pods. A worker
 * all of whose published jobs are `releasing` is departing, not one of them.
 */
function deploymentPool(previous: WorkerConfig | undefined, deployment: DeploymentView, desired: number | undefined, pods: readonly PodView[]): DeploymentWorkers {
  const departing = (share: WorkerConfig['workloads'][string]) => share.jobs.length > 0 && (share.releasing?.length ?? 0) === share.jobs.length;
  const before = Object.entries(previous?.workloads ?? {}).filter(([, share]) => !departing(share)).map(([name]) => name);
  // Its controller has not yet created (nor given up creating) every pod it wants.
  const creating = (deployment.observedReplicas ?? deployment.replicas) < deployment.replicas && deployment.replicaFailure === undefined;
  return deploymentWorkers(before, [...podsOfPool(deployment, 0, pods).values()], desired ?? deployment.replicas, creating);
}

interface WorkersNow {
  statefulSet: PoolView;
  /** How many workers the config assigns over (spec.replicas mid-resize; else the StatefulSet's replicas). */
  workers: number;
  facts: (worker: string) => WorkerFacts;
}

/**
 * Pending restarts after a change: the workers whose share changed now, each
 * pinned to the uid of the pod that holds the older share, plus earlier steps
 * whose pod still holds an older share, which keep the waits they had (a newer
 * version never drops a make-before-break wait), plus pods that acknowledge a
 * share other than their own.
 */
function restartWorkspace(
  previous: RestartWorkspace,
  plan: AssignmentDiff,
  handoff: ValidSwarm['spec']['restart']['handoff'],
  now: WorkersNow,
  version: number,
  /** Workers whose pods' loaded share is unknown (the previous config was lost): restarted like changed ones. */
  unknown: readonly string[] = [],
): RestartWorkspace {
  const { name: sts, startOrdinal } = now.statefulSet;
  // A gainer may be a brand-new worker with no pod yet (the StatefulSet grows
  // after the config is written): waiting for it is the point.
  const exists = (w: string) => workerIndex(sts, w, now.workers, startOrdinal) !== undefined;
  const carried = new Map(pendingSteps(previous.steps, now.facts).map((s) => [s.worker, s.waitFor.filter(exists)] as const));
  // A worker new to the config whose pod already serves and acknowledges
  // started before its share existed (it predates the first assignment, or the
  // StatefulSet made it before this write): it runs an older config, like a
  // changed worker, until it says otherwise (a hot reload settles the step).
  // Pods that do not acknowledge are left to the inference in coverage.ts.
  // A pod that cannot acknowledge is restarted once too: what it read cannot be observed.
  const predating = plan.addedWorkers.filter((w) => {
    const { pod, ack } = now.facts(w);
    return pod !== undefined && !pod.terminating && ack !== 'runs';
  });
  const restarting = new Set([...plan.changedWorkers, ...predating, ...unknown]);
  const change = { ...plan, changedWorkers: [...restarting], addedWorkers: plan.addedWorkers.filter((w) => !restarting.has(w)) };
  const steps = restartOrder(change, handoff, undefined, carried).flatMap((s) => {
    const pod = now.facts(s.worker).pod;
    // No pod: the StatefulSet will create one, and it will read the new share.
    return pod ? [{ worker: s.worker, staleUid: pod.uid, waitFor: s.waitFor.filter(exists) }] : [];
  });
  return { version, steps: withUnacknowledged(steps, now) };
}

/** Steps whose pod still holds an older share: the pinned pod is live and does not acknowledge its share yet. */
function pendingSteps(steps: readonly RecordedStep[], facts: (worker: string) => WorkerFacts): RecordedStep[] {
  return steps.filter((s) => stepState(s, facts(s.worker)) !== 'done');
}

/**
 * Adds a step for every live pod that acknowledges a share other than its own
 * and has none: a pod that started before its share was written (a new worker,
 * one that predates the first assignment, one created while the config was
 * being written) runs what it read then, observed rather than assumed. So too,
 * with `unverifiable`, a serving pod that cannot acknowledge and whose share
 * no start time vouches for (coverage.ts unverifiable): else it stays
 * Uncovered for good.
 */
function withUnacknowledged(steps: readonly RecordedStep[], now: WorkersNow, unverifiable?: (worker: string, pod: PodView) => boolean): RecordedStep[] {
  const stepped = new Set(steps.map((s) => s.worker));
  const extra = poolWorkerNames(now.statefulSet, now.workers, undefined).flatMap((worker) => {
    const { pod, ack } = now.facts(worker);
    if (stepped.has(worker) || !pod || pod.terminating) return [];
    if (ack !== 'differs' && !(pod.ready && unverifiable?.(worker, pod))) return [];
    return [{ worker, staleUid: pod.uid, waitFor: [] }];
  });
  return [...steps, ...extra];
}

/** The workers of `config` whose pods coverage.ts can judge neither by acknowledgement nor by start time. */
const unverifiableIn =
  (config: WorkerConfig, lastChange: WrittenAt | undefined) =>
  (worker: string, pod: PodView): boolean => {
    const share = config.workloads[worker];
    return share !== undefined && unverifiable(worker, pod, share.version, lastChange);
  };

/** Our controller reference, in place if present (so an unchanged list compares equal). */
function withOwner(refs: readonly OwnerReference[], ours: OwnerReference): OwnerReference[] {
  const i = refs.findIndex((o) => o.uid === ours.uid);
  return i < 0 ? [...refs, ours] : refs.map((o, j) => (j === i ? { ...o, ...ours } : o));
}

/**
 * The merge patch that turns `observed` into `desired`, or undefined when they
 * agree. Only keys that differ are sent (null removes one), so labels,
 * annotations and data keys of other owners are never part of the write, and
 * finalizers are not touched at all. ownerReferences is a list, which a merge
 * patch replaces whole: it is sent, as read plus ours, only when ours changed.
 */
function configMapPatch(observed: ConfigMapView, desired: ConfigMapView): ConfigMapPatch | undefined {
  const labels = changedKeys(observed.labels, desired.labels);
  const annotations = changedKeys(observed.annotations, desired.annotations);
  const data = changedKeys(observed.data, desired.data);
  const owners = jsonEqual(observed.ownerReferences, desired.ownerReferences) ? undefined : desired.ownerReferences;
  if (!labels && !annotations && !data && !owners) return undefined;
  return {
    name: observed.name,
    namespace: observed.namespace,
    resourceVersion: observed.resourceVersion ?? '',
    ...(labels ? { labels } : {}),
    ...(annotations ? { annotations } : {}),
    ...(owners ? { ownerReferences: owners } : {}),
    ...(data ? { data } : {}),
  };
}

function changedKeys(before: Record<string, string>, after: Record<string, string>): Record<string, string | null> | undefined {
  const changed: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(after)) if (before[k] !== v) changed[k] = v;
  for (const k of Object.keys(before)) if (!(k in after)) changed[k] = null;
  return Object.keys(changed).length ? changed : undefined;
}

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');
const base64Bytes = (s: string): number => Buffer.from(s, 'base64').length;
const count = (n: number): string => n.toLocaleString('en-US');

/** The sizes the API server checks on a ConfigMap, as its validation counts them. */
function configMapSizes(cm: ConfigMapView): { dataBytes: number; annotationBytes: number } {
  const dataBytes =
    Object.values(cm.data).reduce((n, v) => n + utf8(v), 0) +
    Object.values(cm.binaryData ?? {}).reduce((n, v) => n + base64Bytes(v), 0);
  const annotationBytes = Object.entries(cm.annotations).reduce((n, [k, v]) => n + utf8(k) + utf8(v), 0);
  return { dataBytes, annotationBytes };
}

/** Why the API server would refuse this ConfigMap for its size, or undefined when it fits. */
function sizeProblem(cm: ConfigMapView, key: string): string | undefined {
  const { dataBytes, annotationBytes } = configMapSizes(cm);
  const { configMapDataBytes, annotationsBytes } = KUBERNETES_LIMITS;
  if (dataBytes > configMapDataBytes) {
    return `ConfigMap ${cm.name} would hold ${count(dataBytes)} bytes of data (${key}: ${count(utf8(cm.data[key] ?? ''))}); the limit is ${count(configMapDataBytes)} bytes: use fewer or shorter job names, or split the jobs over several Swarms`;
  }
  if (annotationBytes > annotationsBytes) {
    return `ConfigMap ${cm.name} would carry ${count(annotationBytes)} bytes of annotations; the limit is ${count(annotationsBytes)} bytes`;
  }
  return undefined;
}
