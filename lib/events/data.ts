// Is the event's data the thing its type says? Each check returns the object or a
// problem a person can act on. Only the fields Swarm relies on are checked: the
// event is a trigger, the real state is read from the API afterwards.
import type { AssignmentChangedData, KubeObject, ObjectRef, ResyncData } from './types.js';

export type Checked<T> = { ok: true; value: T } | { ok: false; problem: string };

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const isNonEmptyString = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

function describe(v: unknown): string {
  if (v === undefined || v === '') return 'no data';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'an array';
  if (v instanceof Uint8Array) return 'binary data';
  return `a ${typeof v}`;
}

function missing(where: string, fields: Record<string, unknown>): string[] {
  return Object.entries(fields)
    .filter(([, v]) => !isNonEmptyString(v))
    .map(([k]) => `${where}${k}`);
}

/** Resource mode: the full object, as the informer saw it. */
export function checkKubeObject(data: unknown): Checked<KubeObject> {
  if (!isRecord(data)) return { ok: false, problem: `data must be a Kubernetes object, got ${describe(data)}` };
  const metadata = isRecord(data.metadata) ? data.metadata : {};
  const absent = [
    ...missing('', { apiVersion: data.apiVersion, kind: data.kind }),
    ...missing('metadata.', { name: metadata.name, namespace: metadata.namespace }),
  ];
  if (absent.length > 0) return { ok: false, problem: `data is not a namespaced Kubernetes object: missing ${absent.join(', ')}` };
  if (metadata.ownerReferences !== undefined && !Array.isArray(metadata.ownerReferences)) {
    return { ok: false, problem: 'data.metadata.ownerReferences must be a list' };
  }
  return { ok: true, value: data as KubeObject };
}

/** Ref mode: corev1.ObjectReference {apiVersion, kind, name, namespace}. */
export function checkObjectRef(data: unknown): Checked<ObjectRef> {
  if (!isRecord(data)) return { ok: false, problem: `data must be an object reference, got ${describe(data)}` };
  const absent = missing('', { apiVersion: data.apiVersion, kind: data.kind, name: data.name, namespace: data.namespace });
  if (absent.length > 0) return { ok: false, problem: `data is not an object reference: missing ${absent.join(', ')}` };
  const { apiVersion, kind, name, namespace } = data as unknown as ObjectRef;
  return { ok: true, value: { apiVersion, kind, name, namespace } };
}

export function checkAssignmentChanged(data: unknown): Checked<AssignmentChangedData> {
  if (!isRecord(data)) return { ok: false, problem: `data must be {swarm, version, workers}, got ${describe(data)}` };
  const swarm = isRecord(data.swarm) ? data.swarm : {};
  const absent = missing('swarm.', { namespace: swarm.namespace, name: swarm.name, uid: swarm.uid });
  if (absent.length > 0) return { ok: false, problem: `data is not an assignment change: missing ${absent.join(', ')}` };
  if (!Number.isSafeInteger(data.version) || (data.version as number) < 0) {
    return { ok: false, problem: 'data.version must be a non-negative integer' };
  }
  if (!Array.isArray(data.workers) || !data.workers.every(isNonEmptyString)) {
    return { ok: false, problem: 'data.workers must be a list of pod names' };
  }
  return {
    ok: true,
    value: {
      swarm: { namespace: swarm.namespace as string, name: swarm.name as string, uid: swarm.uid as string },
      version: data.version as number,
      workers: [...(data.workers as string[])],
    },
  };
}

/** A resync ping's data: `{"namespace": "<namespace>"}` (other fields are ignored). */
export function checkResyncData(data: unknown): Checked<ResyncData> {
  if (!isRecord(data)) return { ok: false, problem: `data must be {"namespace": "<namespace>"}, got ${describe(data)}` };
  if (!isNonEmptyString(data.namespace)) return { ok: false, problem: 'data is not a resync ping: missing namespace' };
  return { ok: true, value: { namespace: data.namespace } };
}
