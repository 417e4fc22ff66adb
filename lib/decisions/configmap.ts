// The assign function's decision: the desired worker ConfigMap for a Swarm,
// built from the spec, the StatefulSet's replica count and the ConfigMap as it
// is now (its current assignment is the sticky input of the assigner, and its
// annotations are the restart workspace). Pure: observations in, decision out.
import { KUBERNETES_LIMITS, LIMITS } from '../api/schema.js';
import { API_VERSION, KIND, type Handoff, type Swarm, type ValidSwarm } from '../api/types.js';
import { assign } from '../assignment/index.js';
import type { UnhonouredDedication } from '../assignment/types.js';
import type { ConfigMapPatch, ConfigMapView, OwnerReference, PodView, StatefulSetView } from '../kube/types.js';
import { diff, restartOrder, type Move, type RestartStep } from '../plan/index.js';
import { assignmentOf, nextConfig, parse, render, type WorkerConfig } from '../workerconfig/index.js';
import { jsonEqual } from './equal.js';
import { compareWorkers, ordinalOf, workerNames } from '../assignment/workers.js';
import { podsByWorker } from './workers.js';
import {
  LABEL_MANAGED_BY,
  LABEL_SWARM,
  MANAGED_BY,
  readRestarts,
  withLastChange,
  withRestarts,
  type RecordedStep,
  type RestartWorkspace,
} from './workspace.js';

export interface AssignObservation {
  /** Validated, defaults applied. */
  swarm: ValidSwarm;
  statefulSet: StatefulSetView;
  configMap: ConfigMapView | undefined;
  pods: readonly PodView[];
  /** RFC 3339, recorded with a new config version as the time it was written. */
  now?: string;
}

export type BlockedReason = 'ConfigMapConflict' | 'ConfigMapTooLarge' | 'TooManyWorkers';

export type AssignDecision =
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
      /** The assignment changed (the config version was bumped). */
      changed: boolean;
      changedWorkers: string[];
      moves: Move[];
      unhonoured: readonly UnhonouredDedication[];
      /** Set when the config found in the ConfigMap could not be parsed (it is replaced). */
      malformedPrevious?: string;
    };

export const ownerReferenceTo = (swarm: Swarm): OwnerReference => ({
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
}

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
  return { previous, rendered: () => (rendered ??= render(previous)) };
};

export function decideConfigMap(obs: AssignObservation, read: ConfigReader = readConfig): AssignDecision {
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

  if (statefulSet.replicas > LIMITS.maxWorkers) {
    return {
      kind: 'blocked',
      reason: 'TooManyWorkers',
      message: `StatefulSet ${statefulSet.name} has ${count(statefulSet.replicas)} replicas; a Swarm manages at most ${count(LIMITS.maxWorkers)}`,
    };
  }

  const { previous, malformed, rendered } = read(configMap?.data[key]);
  // The last version published, as status recorded it: a ConfigMap deleted or
  // garbled by hand cannot take versions backwards, and its workers are restarted.
  const floor = swarm.status?.version ?? 0;
  const lost = previous === undefined ? floor > 0 : previous.version < floor;
  const previousAssignment = previous ? assignmentOf(previous) : undefined;
  const result = assign({
    statefulSetName: statefulSet.name,
    replicas: statefulSet.replicas,
    jobs: spec.workload.jobs,
    ...(previousAssignment ? { previous: previousAssignment } : {}),
  });
  const config = nextConfig(previous, result.assignment, floor);
  const changed = config !== previous;
  // What moved, only when something did (a no-op reconcile skips the diff).
  const plan = changed ? diff(previousAssignment ?? {}, result.assignment) : undefined;

  let annotations = { ...(configMap?.annotations ?? {}) };
  if (plan) {
    const order = restartOrder(plan, spec.restart.handoff);
    // The previous config lost: what any pod loaded is unknown, so every live pod is restarted.
    const unknown = lost ? workerNames(statefulSet.name, statefulSet.replicas) : [];
    const restarts =
      spec.restart.policy === 'Restart'
        ? restartWorkspace(readRestarts(annotations), withUnknown(order, unknown, plan.moves, spec.restart.handoff), obs, config.version)
        : { version: config.version, steps: [] };
    annotations = withRestarts(annotations, restarts);
    // Workers whose share changed with no pod pinned for a restart (none was listed):
    // a pod of theirs may have mounted the older share, so status infers that a
    // worker which cannot acknowledge runs it only from its start time (coverage.ts).
    // Hot-reloading workers never restart to load a share: none are judged so.
    const pinned = new Set(restarts.steps.map((s) => s.worker));
    const unpinned = spec.restart.policy === 'Restart' ? { unpinned: [...new Set([...plan.changedWorkers, ...unknown])].filter((w) => !pinned.has(w)) } : {};
    annotations = withLastChange(annotations, { version: config.version, moves: plan.moves, ...(obs.now ? { at: obs.now } : {}), ...unpinned });
  } else {
    // Finished steps are forgotten here, in assign's own guarded write (restart
    // never writes the ConfigMap), so status is judged from live bookkeeping only.
    const recorded = readRestarts(annotations);
    const pending = spec.restart.policy === 'Restart' ? pendingSteps(recorded.steps, obs) : [];
    if (pending.length !== recorded.steps.length) annotations = withRestarts(annotations, { version: recorded.version, steps: pending });
  }

  const desired: ConfigMapView = {
    name: spec.configMapName,
    namespace: swarm.metadata.namespace,
    ...(configMap?.uid ? { uid: configMap.uid } : {}),
    ...(configMap?.resourceVersion ? { resourceVersion: configMap.resourceVersion } : {}),
    labels: { ...(configMap?.labels ?? {}), [LABEL_SWARM]: swarm.metadata.name, [LABEL_MANAGED_BY]: MANAGED_BY },
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
    changed,
    changedWorkers: plan ? [...plan.changedWorkers] : [],
    moves: plan ? plan.moves.map((m) => ({ job: m.job, from: m.from, to: m.to })) : [],
    unhonoured: result.unhonouredDedications,
    ...(malformed ? { malformedPrevious: malformed } : {}),
  };
}

/**
 * Pending restarts after a change: the workers whose share changed now, each
 * pinned to the uid of the pod that holds the older share, plus earlier steps
 * whose pod has still not been restarted.
 */
export function restartWorkspace(
  previous: RestartWorkspace,
  order: readonly RestartStep[],
  obs: Pick<AssignObservation, 'statefulSet' | 'pods'>,
  version: number,
): RestartWorkspace {
  const { name: sts, replicas } = obs.statefulSet;
  const pods = podsByWorker(sts, replicas, obs.pods);
  const inPlan = new Set(order.map((s) => s.worker));
  // A gainer may be a brand-new worker with no pod yet: waiting for it is the point.
  const exists = (w: string) => (ordinalOf(sts, w) ?? Infinity) < replicas;
  const carried = pendingSteps(previous.steps, obs).filter((s) => !inPlan.has(s.worker));
  const fresh = order.flatMap((s) => {
    const pod = pods.get(s.worker);
    // No pod: the StatefulSet will create one, and it will read the new share.
    return pod ? [{ worker: s.worker, staleUid: pod.uid, waitFor: [...s.waitFor] }] : [];
  });
  const steps = [...carried, ...fresh].map((s) => ({ ...s, waitFor: s.waitFor.filter(exists) }));
  return { version, steps };
}

/**
 * The restart order plus the workers whose pods' loaded share is unknown. They
 * take over jobs: under MakeBeforeBreak they restart first (the losers already
 * wait for them); under BreakBeforeMake they wait for the workers they take jobs from.
 */
export function withUnknown(order: readonly RestartStep[], unknown: readonly string[], moves: readonly Move[], handoff: Handoff): RestartStep[] {
  const planned = new Set(order.map((s) => s.worker));
  const extra = unknown
    .filter((w) => !planned.has(w))
    .map((worker) => ({
      worker,
      waitFor: handoff === 'BreakBeforeMake' ? [...new Set(moves.filter((m) => m.to === worker && m.from !== null && m.from !== worker).map((m) => m.from as string))].sort(compareWorkers) : [],
    }));
  return [...order, ...extra];
}

/** Steps whose pod still holds the older share (a live worker whose pod has the stale uid). */
export function pendingSteps(steps: readonly RecordedStep[], obs: Pick<AssignObservation, 'statefulSet' | 'pods'>): RecordedStep[] {
  const pods = podsByWorker(obs.statefulSet.name, obs.statefulSet.replicas, obs.pods);
  return steps.filter((s) => pods.get(s.worker)?.uid === s.staleUid);
}

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
export function configMapPatch(observed: ConfigMapView, desired: ConfigMapView): ConfigMapPatch | undefined {
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
export function configMapSizes(cm: ConfigMapView): { dataBytes: number; annotationBytes: number } {
  const dataBytes =
    Object.values(cm.data).reduce((n, v) => n + utf8(v), 0) +
    Object.values(cm.binaryData ?? {}).reduce((n, v) => n + base64Bytes(v), 0);
  const annotationBytes = Object.entries(cm.annotations).reduce((n, [k, v]) => n + utf8(k) + utf8(v), 0);
  return { dataBytes, annotationBytes };
}

/** Why the API server would refuse this ConfigMap for its size, or undefined when it fits. */
export function sizeProblem(cm: ConfigMapView, key: string): string | undefined {
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
