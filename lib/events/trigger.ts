// CloudEvent → Trigger: which object changed, nothing more. Pure; throws
// BadEventError (422) for events Swarm cannot act on.
import { checkName, nameProblem, quoteName, type NamedKind } from '../api/names.js';
import { checkAssignmentChanged, checkKubeObject, checkObjectRef, checkResyncData } from './data.js';
import { BadEventError } from './errors.js';
import { APISERVER_EVENT_TYPES, ASSIGNMENT_CHANGED_TYPE, PING_EVENT_TYPE } from './types.js';
import type { KubeObject, Mode, Trigger, Verb, WatchedKind } from './types.js';
import { SWARM_LABEL } from '../workerconfig/acknowledgement.js';
import { parseWorker } from '../assignment/workers.js';

/** The fields of a CloudEvent we read (the SDK's CloudEvent has them; so does a plain object). */
export interface EventLike {
  type: string;
  data?: unknown;
  [attribute: string]: unknown;
}

const apiServerTypes = new Map<string, { mode: Mode; verb: Verb }>(
  (['resource', 'ref'] as const).flatMap((mode) =>
    (['add', 'update', 'delete'] as const).map((verb) => [APISERVER_EVENT_TYPES[mode][verb], { mode, verb }] as const),
  ),
);

export const KNOWN_EVENT_TYPES: readonly string[] = [...apiServerTypes.keys(), ASSIGNMENT_CHANGED_TYPE, PING_EVENT_TYPE];

/** The API group each watched kind must come from: a `Pod` of another group is not ours. */
const WATCHED_KINDS: Record<WatchedKind, (apiVersion: string) => boolean> = {
  Swarm: (v) => v.startsWith('k8slab.info/'),
  StatefulSet: (v) => v.startsWith('apps/'),
  Deployment: (v) => v.startsWith('apps/'),
  Pod: (v) => v === 'v1',
  Lease: (v) => v === 'coordination.k8s.io/v1',
  ConfigMap: (v) => v === 'v1',
};

function watchedKind(kind: string, apiVersion: string): WatchedKind {
  const accepts = (WATCHED_KINDS as Record<string, ((v: string) => boolean) | undefined>)[kind];
  if (!accepts || !accepts(apiVersion)) {
    throw new BadEventError(422, `unsupported kind ${kind} (${apiVersion}): Swarm handles Swarm (k8slab.info), StatefulSet and Deployment (apps), Pod (v1), Lease (coordination.k8s.io) and ConfigMap (v1) events`);
  }
  return kind as WatchedKind;
}

/** The StatefulSet controlling a Pod, if its ownerReferences say so. */
export function owningStatefulSet(pod: KubeObject): string | undefined {
  const owners = (pod.metadata.ownerReferences ?? []).filter((o) => o?.kind === 'StatefulSet' && String(o.apiVersion).startsWith('apps/'));
  return (owners.find((o) => o.controller === true) ?? owners[0])?.name;
}

/** The Deployment controlling a Pod: its controlling ReplicaSet `<deployment>-<pod-template-hash>`, less the hash. */
export function owningDeployment(pod: KubeObject): string | undefined {
  const owner = (pod.metadata.ownerReferences ?? []).find((o) => o?.kind === 'ReplicaSet' && String(o.apiVersion).startsWith('apps/') && o.controller === true);
  const hash = labelOf(pod, 'pod-template-hash');
  const suffix = `-${hash ?? ''}`;
  return owner && hash && owner.name.endsWith(suffix) && owner.name.length > suffix.length ? owner.name.slice(0, -suffix.length) : undefined;
}

function labelOf(object: KubeObject, key: string): string | undefined {
  const labels = object.metadata.labels;
  const value = labels && typeof labels === 'object' ? (labels as Record<string, unknown>)[key] : undefined;
  return typeof value === 'string' && value !== '' ? value : undefined;
}

/** The Swarm a ConfigMap belongs to: its Swarm controller reference, else its k8slab.info/swarm label. */
function owningSwarm(configMap: KubeObject): string | undefined {
  const owner = (configMap.metadata.ownerReferences ?? []).find((o) => o?.kind === 'Swarm' && String(o.apiVersion).startsWith('k8slab.info/') && o.controller === true);
  if (owner) return owner.name;
  const labels = configMap.metadata.labels;
  const label = labels && typeof labels === 'object' ? (labels as Record<string, unknown>)[SWARM_LABEL] : undefined;
  return typeof label === 'string' && label !== '' ? label : undefined;
}

/**
 * The names an event carries, checked as the apiserver checks them, before any
 * API call: in a path `..` and `.` are dot segments (another resource is read),
 * and any other invalid name can only fail, so retrying would not help (422).
 */
function checkNames(type: string, names: Array<[field: string, kind: NamedKind, name: unknown]>): void {
  for (const [field, kind, name] of names) {
    const problem = typeof name === 'string' ? checkName(field, kind, name) : `${field}: must be a string`;
    if (problem !== undefined) throw new BadEventError(422, `${type}: ${problem}`);
  }
}

export function toTrigger(event: EventLike): Trigger {
  if (event.type === PING_EVENT_TYPE) {
    const checked = checkResyncData(event.data);
    if (!checked.ok) throw new BadEventError(422, `${event.type}: ${checked.problem}`);
    checkNames(event.type, [['data.namespace', 'Namespace', checked.value.namespace]]);
    return { source: 'ping', type: 'resync', namespace: checked.value.namespace };
  }
  if (event.type === ASSIGNMENT_CHANGED_TYPE) {
    const checked = checkAssignmentChanged(event.data);
    if (!checked.ok) throw new BadEventError(422, checked.problem);
    const { swarm, version, workers } = checked.value;
    checkNames(event.type, [
      ['data.swarm.namespace', 'Namespace', swarm.namespace],
      ['data.swarm.name', 'Swarm', swarm.name],
      ...workers.map((w, i): [string, NamedKind, string] => [`data.workers[${i}]`, 'Pod', w]),
    ]);
    return { source: 'swarm', type: 'assignment.changed', ...swarm, version, workers };
  }
  const typed = apiServerTypes.get(event.type);
  if (!typed) {
    throw new BadEventError(422, `unknown event type ${quoteName(String(event.type))} (expected one of ${KNOWN_EVENT_TYPES.join(', ')})`);
  }
  const { mode, verb } = typed;
  if (mode === 'ref') {
    const ref = checkObjectRef(event.data);
    if (!ref.ok) throw new BadEventError(422, `${event.type}: ${ref.problem}`);
    const kind = watchedKind(ref.value.kind, ref.value.apiVersion);
    checkNames(event.type, [
      ['data.namespace', 'Namespace', ref.value.namespace],
      ['data.name', kind, ref.value.name],
    ]);
    return { source: 'apiserver', verb, mode, ...ref.value, kind };
  }
  const checked = checkKubeObject(event.data);
  if (!checked.ok) throw new BadEventError(422, `${event.type}: ${checked.problem}`);
  const object = checked.value;
  // The adapter copies the object's kind into the `kind` extension; disagreement means a forged or mangled event.
  if (typeof event.kind === 'string' && event.kind !== object.kind) {
    throw new BadEventError(422, `${event.type}: the kind attribute says ${event.kind} but data is a ${object.kind}`);
  }
  const kind = watchedKind(object.kind, object.apiVersion);
  const { name, namespace, uid, resourceVersion } = object.metadata;
  checkNames(event.type, [
    ['data.metadata.namespace', 'Namespace', namespace],
    ['data.metadata.name', kind, name],
  ]);
  // Only the key and the copy's version are kept: the object is read fresh, so the event's copy (perhaps a large Swarm) is not held.
  const trigger: Trigger = { source: 'apiserver', verb, mode, kind, apiVersion: object.apiVersion, namespace, name };
  if (typeof uid === 'string') trigger.uid = uid;
  if (typeof resourceVersion === 'string' && resourceVersion !== '') trigger.resourceVersion = resourceVersion;
  if (kind === 'Swarm') {
    // A hint only (the list it selects is read fresh); an invalid one is the Swarm's problem to report, not the event's.
    const hint = (object.spec as { statefulSetName?: unknown } | undefined)?.statefulSetName;
    if (typeof hint === 'string' && nameProblem('StatefulSet', hint) === undefined) trigger.statefulSetName = hint;
    const generation = object.metadata.generation;
    const observed = (object.status as { observedGeneration?: unknown } | undefined)?.observedGeneration;
    if (verb === 'update' && Number.isSafeInteger(generation) && generation === observed) trigger.generationObserved = true;
  }
  if (kind === 'Pod') {
    const owner = owningStatefulSet(object);
    if (owner !== undefined) {
      checkNames(event.type, [['data.metadata.ownerReferences[].name (the owning StatefulSet)', 'StatefulSet', owner]]);
      trigger.ownerStatefulSet = owner;
    }
    const deployment = owningDeployment(object);
    if (deployment !== undefined && nameProblem('Deployment', deployment) === undefined) trigger.deploymentName = deployment;
  }
  if (kind === 'Lease') {
    // A StatefulSet pod's Lease is `<label>-<ordinal>`; anything else labelled is a Deployment pod's.
    const pool = labelOf(object, SWARM_LABEL);
    if (pool !== undefined && parseWorker(name)?.statefulSet !== pool && nameProblem('Deployment', pool) === undefined) trigger.deploymentName = pool;
  }
  if (kind === 'ConfigMap') {
    const swarm = owningSwarm(object);
    if (swarm !== undefined) {
      checkNames(event.type, [['data.metadata (the owning Swarm)', 'Swarm', swarm]]);
      trigger.swarm = swarm;
    }
  }
  return trigger;
}
