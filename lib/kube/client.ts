// The one interface through which the reconcilers touch Kubernetes.
// Reads return undefined for a missing object; writes carry resourceVersion or
// uid preconditions, so a stale decision is refused by the API server (409)
// instead of overwriting someone else's change.
import type { Swarm } from '../api/types.js';
import type { ConfigMapPatch, ConfigMapView, DeploymentView, EventView, LeaseView, PodView, ScaleView, StatefulSetView } from './types.js';

export type DeleteOutcome = 'deleted' | 'gone' | 'precondition-failed';
export type AnnotateOutcome = 'annotated' | 'gone' | 'precondition-failed';

export interface KubeClient {
  getSwarm(namespace: string, name: string): Promise<Swarm | undefined>;
  /**
   * The Swarms of a namespace whose spec.statefulSetName (kind Deployment:
   * spec.deploymentName) is `name` (a field selector, not a full list).
   */
  listSwarmsNaming(namespace: string, name: string, kind?: 'StatefulSet' | 'Deployment'): Promise<Swarm[]>;
  /** The names of the Swarms of a namespace (paged, objects dropped): a resync reconciles each by its key. */
  listSwarmNames(namespace: string): Promise<string[]>;
  /** PUT on the status subresource, guarded by swarm.metadata.resourceVersion. */
  replaceSwarmStatus(swarm: Swarm): Promise<Swarm>;

  getStatefulSet(namespace: string, name: string): Promise<StatefulSetView | undefined>;
  /** The StatefulSet's scale subresource (assign resizes StatefulSets through it only). */
  getStatefulSetScale(namespace: string, name: string): Promise<ScaleView | undefined>;
  /** PUT on the scale subresource, guarded by scale.resourceVersion (required). */
  replaceStatefulSetScale(scale: ScaleView): Promise<ScaleView>;
  getDeployment(namespace: string, name: string): Promise<DeploymentView | undefined>;
  /** The Deployment's scale subresource (a Deployment pool is resized through it only). */
  getDeploymentScale(namespace: string, name: string): Promise<ScaleView | undefined>;
  /** PUT on the Deployment's scale subresource, guarded by scale.resourceVersion (required). */
  replaceDeploymentScale(scale: ScaleView): Promise<ScaleView>;
  listPods(namespace: string, labelSelector: string): Promise<PodView[]>;
  /** The workers' acknowledgement Leases (coordination.k8s.io/v1) matching the selector. */
  listLeases(namespace: string, labelSelector: string): Promise<LeaseView[]>;

  getConfigMap(namespace: string, name: string): Promise<ConfigMapView | undefined>;
  /** Fails with Conflict if it already exists. */
  createConfigMap(configMap: ConfigMapView): Promise<ConfigMapView>;
  /**
   * Merge-patches only the fields Swarm owns, guarded by patch.resourceVersion
   * (required): what other owners put on the ConfigMap survives.
   */
  patchConfigMap(patch: ConfigMapPatch): Promise<ConfigMapView>;

  /**
   * Merge-patches annotations onto only the pod with this uid at this
   * resourceVersion (a replacement or a changed pod: precondition-failed).
   */
  annotatePod(namespace: string, name: string, preconditions: { uid: string; resourceVersion: string }, annotations: Record<string, string>): Promise<AnnotateOutcome>;
  /** Deletes only the pod with this uid and resourceVersion. */
  deletePod(namespace: string, name: string, preconditions: { uid: string; resourceVersion: string }): Promise<DeleteOutcome>;

  createEvent(event: EventView): Promise<void>;
}
