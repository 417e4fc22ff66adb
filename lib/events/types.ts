// The CloudEvents Swarm consumes and produces, as constants and plain data.

/** What Knative's ApiServerSource adapter sends (knative.dev/eventing pkg/apis/sources/constants.go). */
export const APISERVER_EVENT_TYPES = {
  resource: {
    add: 'dev.knative.apiserver.resource.add',
    update: 'dev.knative.apiserver.resource.update',
    delete: 'dev.knative.apiserver.resource.delete',
  },
  ref: {
    add: 'dev.knative.apiserver.ref.add',
    update: 'dev.knative.apiserver.ref.update',
    delete: 'dev.knative.apiserver.ref.delete',
  },
} as const;

/** Emitted by `assign` when it published a new assignment; consumed by `restart`. */
export const ASSIGNMENT_CHANGED_TYPE = 'info.k8slab.swarm.assignment.changed';

/** What Knative's PingSource sends (knative.dev/eventing pkg/apis/sources/v1 PingSourceEventType): the periodic resync. */
export const PING_EVENT_TYPE = 'dev.knative.sources.ping';

export type Verb = 'add' | 'update' | 'delete';
/** Resource mode carries the whole object; ref mode only {apiVersion, kind, name, namespace}. */
export type Mode = 'resource' | 'ref';
/**
 * Lease: a worker's acknowledgement (lib/workerconfig/acknowledgement.ts), named after its pod.
 * ConfigMap: a Swarm's own worker ConfigMap (label app.kubernetes.io/managed-by=swarm), so an edit or delete by hand is repaired at once.
 */
export type WatchedKind = 'Swarm' | 'StatefulSet' | 'Deployment' | 'Pod' | 'Lease' | 'ConfigMap';

/** A Kubernetes object as it travels in a resource-mode event: only what we rely on is typed. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace: string;
    uid?: string;
    resourceVersion?: string;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string; uid?: string; controller?: boolean }>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

/** corev1.ObjectReference as the adapter fills it in ref mode. */
export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  namespace: string;
}

/** Something changed in the API: a key (kind, namespace, name) to go and read fresh state by, never the state itself. */
export interface ApiServerTrigger {
  source: 'apiserver';
  verb: Verb;
  mode: Mode;
  kind: WatchedKind;
  apiVersion: string;
  namespace: string;
  name: string;
  uid?: string;
  /**
   * The copy's metadata.resourceVersion (resource mode only): which version of
   * the object the event announces. No reconcile reads it: they read the object fresh.
   */
  resourceVersion?: string;
  /** For a Pod: the StatefulSet that controls it, from ownerReferences (resource mode only). */
  ownerStatefulSet?: string;
  /**
   * The Deployment whose pool the object belongs to (resource mode only): for a
   * Pod, its controlling ReplicaSet's Deployment; for a Lease, its
   * k8slab.info/swarm label when its name is not `<label>-<ordinal>` (a
   * Deployment pod's acknowledgement).
   */
  deploymentName?: string;
  /**
   * For a Swarm: spec.statefulSetName as the event's copy had it (resource mode
   * only), to list the Swarms naming that StatefulSet in the same request that
   * reads the Swarm; a stale hint costs a second read, never a wrong answer.
   */
  statefulSetName?: string;
  /**
   * For a Swarm update: the event's copy had status.observedGeneration equal to
   * metadata.generation (resource mode only). Only `assign` writes that field,
   * after reconciling that generation, so such an update is the echo of its own
   * status write (or a change of labels, annotations or status, which decide
   * nothing): nothing to observe (lib/reconcilers/keys.ts).
   */
  generationObserved?: true;
  /** For a ConfigMap: the Swarm it belongs to, from its controller reference or its k8slab.info/swarm label (resource mode only). */
  swarm?: string;
}

export interface SwarmRef {
  namespace: string;
  name: string;
  uid: string;
}

export interface AssignmentChangedData {
  swarm: SwarmRef;
  /** The ConfigMap's top-level version after the change. */
  version: number;
  /** Pods whose share changed. */
  workers: string[];
}

export interface AssignmentChangedTrigger {
  source: 'swarm';
  type: 'assignment.changed';
  namespace: string;
  name: string;
  uid: string;
  version: number;
  workers: string[];
}

/** The data a resync ping carries (the PingSource's `spec.data`). */
export interface ResyncData {
  /** Every Swarm of this namespace is reconciled. */
  namespace: string;
}

/** A periodic resync: reconcile every Swarm of a namespace as if each had its own event. */
export interface ResyncTrigger {
  source: 'ping';
  type: 'resync';
  namespace: string;
}

export type Trigger = ApiServerTrigger | AssignmentChangedTrigger | ResyncTrigger;
