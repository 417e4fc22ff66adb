// Plain views of the Kubernetes objects the reconcilers read and write.
// The client module converts API objects to and from these at the boundary,
// so every decision works on small, serialisable data.

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface PodView {
  name: string;
  namespace: string;
  uid: string;
  resourceVersion: string;
  /** RFC 3339; second granularity, as the API server stores it. */
  creationTimestamp: string;
  /** The pod's Ready condition is True. */
  ready: boolean;
  /** deletionTimestamp is set: the pod is going away. */
  terminating: boolean;
  labels: Record<string, string>;
  /** Name of the controlling StatefulSet, from ownerReferences. */
  ownerStatefulSet?: string;
  /** Name of the controlling ReplicaSet (a Deployment's pods: `<deployment>-<pod-template-hash>`), from ownerReferences. */
  ownerReplicaSet?: string;
  /** status.phase: Pending, Running, Succeeded, Failed, Unknown. */
  phase?: string;
  /** The scheduler's message when PodScheduled is False with reason Unschedulable. */
  unschedulable?: string;
  /** The first container waiting with a reason (CrashLoopBackOff, ImagePullBackOff, …). */
  waiting?: { reason: string; message?: string };
  /** RFC 3339: when the last of its containers started running (absent until all run). */
  startedAt?: string;
  /** RFC 3339: the earliest of its containers' starts, when it differs from `startedAt` (a pod with sidecars). */
  restartedAllAt?: string;
  /** RFC 3339: when its Ready condition (before it is scheduled: PodScheduled) last changed. */
  readinessChangedAt?: string;
  /** The share version its kubelet was last asked to deliver (CONFIG_REFRESH_ANNOTATION; lib/decisions/refresh.ts). */
  refreshVersion?: number;
}

/**
 * The pod annotation assign writes to make the kubelet remount the pod's
 * ConfigMap now (lib/decisions/refresh.ts): the worker's share version, decimal.
 */
export const CONFIG_REFRESH_ANNOTATION = 'k8slab.info/config-refresh';

/** A worker's acknowledgement Lease (coordination.k8s.io/v1), as lib/workerconfig/acknowledgement.ts reads it. */
export interface LeaseView {
  name: string;
  namespace: string;
  resourceVersion: string;
  /** spec.holderIdentity */
  holderIdentity?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface StatefulSetView {
  /** Absent on views read before pools had kinds: a StatefulSet all the same. */
  kind?: 'StatefulSet';
  name: string;
  namespace: string;
  uid: string;
  /** metadata.resourceVersion (absent on views built by hand). */
  resourceVersion?: string;
  /** spec.replicas (the API defaults it to 1). */
  replicas: number;
  /** spec.ordinals.start: the first pod's ordinal (absent: 0). Its pods are `<name>-<start>` … */
  startOrdinal?: number;
  /** status.replicas: the pods the StatefulSet controller has created and not yet deleted. */
  observedReplicas?: number;
  /** spec.selector rendered as a label selector string. */
  labelSelector: string;
  /** spec.template.metadata.labels: what its pods will declare (absent on views built by hand: not judged). */
  templateLabels?: Record<string, string>;
  /**
   * status.readyReplicas: the StatefulSet controller's count of its Ready pods,
   * what status reports as the Swarm's readyReplicas while not resizing.
   */
  readyReplicas?: number;
}

/**
 * A Deployment as a worker pool: what a StatefulSet's view says, less ordinals
 * (its pods' names are generated; who the workers are is decided per
 * reconcile: deploymentWorkers in lib/assignment/workers.ts).
 */
export interface DeploymentView {
  kind: 'Deployment';
  name: string;
  namespace: string;
  uid: string;
  /** metadata.resourceVersion (absent on views built by hand). */
  resourceVersion?: string;
  /** No ordinals: its pods' names are generated. */
  startOrdinal?: undefined;
  /** spec.replicas (the API defaults it to 1). */
  replicas: number;
  /** status.replicas: its ReplicaSets' pods that exist, terminating ones excluded. */
  observedReplicas?: number;
  /** spec.selector rendered as a label selector string. */
  labelSelector: string;
  /** spec.template.metadata.labels (absent on views built by hand: not judged). */
  templateLabels?: Record<string, string>;
  /** status.readyReplicas */
  readyReplicas?: number;
  /** Its ReplicaFailure condition's message when True (say, a quota refuses its pods): it will not create more for now. */
  replicaFailure?: string;
}

/** The controller of a Swarm's worker pods, as the decisions see it. */
export type PoolView = StatefulSetView | DeploymentView;

/** What worker identity needs of a pool: its kind, its name and (a StatefulSet's) start ordinal. */
export interface PoolShape {
  kind?: 'StatefulSet' | 'Deployment';
  name: string;
  startOrdinal?: number;
}

export const isDeployment = (pool: PoolShape): pool is PoolShape & Pick<DeploymentView, 'kind'> => pool.kind === 'Deployment';

/** A StatefulSet's scale subresource (autoscaling/v1 Scale): what assign may change of a StatefulSet. */
export interface ScaleView {
  name: string;
  namespace: string;
  /** The StatefulSet's resourceVersion: a write carrying it is refused (409) if the StatefulSet changed. */
  resourceVersion: string;
  /** spec.replicas */
  replicas: number;
}

export interface ConfigMapView {
  name: string;
  namespace: string;
  uid?: string;
  /** Present on objects read from the API; a write carrying it is guarded by it. */
  resourceVersion?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerReferences: OwnerReference[];
  data: Record<string, string>;
  /** Passed through untouched so a write never drops a user's binary keys. */
  binaryData?: Record<string, string>;
}

/**
 * A change to the fields of a ConfigMap that Swarm owns, applied as a JSON
 * merge patch: a key set to null is removed, a key not mentioned is left alone.
 */
export interface ConfigMapPatch {
  name: string;
  namespace: string;
  /** The write is refused (409 Conflict) unless the object is still at this version. */
  resourceVersion: string;
  labels?: Record<string, string | null>;
  annotations?: Record<string, string | null>;
  /** A merge patch replaces a list whole: this is the full list (as read, plus ours). */
  ownerReferences?: OwnerReference[];
  data?: Record<string, string | null>;
}

/** A core/v1 Event about a Swarm, as the reconcilers decide it. */
export interface EventView {
  namespace: string;
  involvedObject: { apiVersion: string; kind: string; name: string; namespace: string; uid?: string };
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
  /** The function that reports it (source.component). */
  reportingComponent: string;
}
