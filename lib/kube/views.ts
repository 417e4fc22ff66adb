// API objects ↔ the plain views of ./types.ts, at the boundary: every
// decision works on small, serialisable data, and these are the only
// functions that know the client's object shapes.
import type * as k8s from '@kubernetes/client-node';
import { CONFIG_REFRESH_ANNOTATION, type ConfigMapPatch, type ConfigMapView, type DeploymentView, type LeaseView, type PodView, type ScaleView, type StatefulSetView } from './types.js';

const iso = (d: Date | string | undefined): string =>
  d === undefined ? '' : typeof d === 'string' ? d : d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The name and namespace every view starts with (empty when the API left them out). */
const named = (m: k8s.V1ObjectMeta | undefined): { name: string; namespace: string } => ({ name: m?.name ?? '', namespace: m?.namespace ?? '' });

export function podView(p: k8s.V1Pod): PodView {
  const owner = p.metadata?.ownerReferences?.find((o) => o.kind === 'StatefulSet' && o.controller);
  const replicaSet = p.metadata?.ownerReferences?.find((o) => o.kind === 'ReplicaSet' && o.controller);
  const refresh = p.metadata?.annotations?.[CONFIG_REFRESH_ANNOTATION];
  const refreshVersion = refresh !== undefined && /^\d{1,15}$/.test(refresh) ? Number(refresh) : undefined;
  return {
    ...named(p.metadata),
    uid: p.metadata?.uid ?? '',
    resourceVersion: p.metadata?.resourceVersion ?? '',
    creationTimestamp: iso(p.metadata?.creationTimestamp),
    ready: p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false,
    terminating: p.metadata?.deletionTimestamp !== undefined && p.metadata?.deletionTimestamp !== null,
    labels: { ...(p.metadata?.labels ?? {}) },
    ...(owner ? { ownerStatefulSet: owner.name } : {}),
    ...(replicaSet ? { ownerReplicaSet: replicaSet.name } : {}),
    ...(refreshVersion !== undefined ? { refreshVersion } : {}),
    ...podProgress(p),
  };
}

/** Why a pod is not (yet) serving, and when its containers started: what a stuck rollout is reported with. */
function podProgress(p: k8s.V1Pod): Pick<PodView, 'phase' | 'unschedulable' | 'waiting' | 'startedAt' | 'restartedAllAt' | 'readinessChangedAt'> {
  const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const ready = p.status?.conditions?.find((c) => c.type === 'Ready');
  const changed = (ready ?? scheduled)?.lastTransitionTime;
  const statuses = p.status?.containerStatuses ?? [];
  const waiting = statuses.find((c) => c.state?.waiting?.reason)?.state?.waiting;
  const started = statuses.map((c) => c.state?.running?.startedAt);
  // The pod runs its share once every container runs: the latest start counts.
  const starts = statuses.length > 0 && started.every((d) => d !== undefined) ? started.map((d) => iso(d)).sort() : [];
  const startedAt = starts.at(-1);
  // Every container started again since then (the earliest start): whatever one of them wrote before is an earlier run's.
  const restartedAllAt = starts[0];
  return {
    ...(p.status?.phase ? { phase: p.status.phase } : {}),
    ...(scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' ? { unschedulable: scheduled.message ?? '' } : {}),
    ...(waiting?.reason ? { waiting: { reason: waiting.reason, ...(waiting.message ? { message: waiting.message } : {}) } } : {}),
    ...(startedAt ? { startedAt } : {}),
    ...(restartedAllAt && restartedAllAt !== startedAt ? { restartedAllAt } : {}),
    ...(changed ? { readinessChangedAt: iso(changed) } : {}),
  };
}

export function leaseView(l: k8s.V1Lease): LeaseView {
  return {
    ...named(l.metadata),
    resourceVersion: l.metadata?.resourceVersion ?? '',
    ...(l.spec?.holderIdentity ? { holderIdentity: l.spec.holderIdentity } : {}),
    labels: { ...(l.metadata?.labels ?? {}) },
    annotations: { ...(l.metadata?.annotations ?? {}) },
  };
}

/** What a pool (StatefulSet or Deployment) view holds alike. */
function poolFields(o: { metadata?: k8s.V1ObjectMeta; spec?: { replicas?: number; selector?: k8s.V1LabelSelector; template?: k8s.V1PodTemplateSpec }; status?: { replicas?: number; readyReplicas?: number } }) {
  return {
    ...named(o.metadata),
    uid: o.metadata?.uid ?? '',
    ...(o.metadata?.resourceVersion ? { resourceVersion: o.metadata.resourceVersion } : {}),
    replicas: o.spec?.replicas ?? 1,
    labelSelector: labelSelectorString(o.spec?.selector),
    templateLabels: { ...(o.spec?.template?.metadata?.labels ?? {}) },
    observedReplicas: o.status?.replicas ?? 0,
    readyReplicas: o.status?.readyReplicas ?? 0,
  };
}

export function statefulSetView(s: k8s.V1StatefulSet): StatefulSetView {
  return {
    kind: 'StatefulSet',
    ...poolFields(s),
    ...(s.spec?.ordinals?.start ? { startOrdinal: s.spec.ordinals.start } : {}),
  };
}

export function deploymentView(d: k8s.V1Deployment): DeploymentView {
  const failure = d.status?.conditions?.find((c) => c.type === 'ReplicaFailure' && c.status === 'True');
  return { kind: 'Deployment', ...poolFields(d), ...(failure ? { replicaFailure: failure.message ?? failure.reason ?? '' } : {}) };
}

export function scaleView(s: k8s.V1Scale): ScaleView {
  return {
    ...named(s.metadata),
    resourceVersion: s.metadata?.resourceVersion ?? '',
    replicas: s.spec?.replicas ?? 0,
  };
}

function labelSelectorString(sel: k8s.V1LabelSelector | undefined): string {
  const parts = Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

export function configMapView(c: k8s.V1ConfigMap): ConfigMapView {
  return {
    ...named(c.metadata),
    ...(c.metadata?.uid ? { uid: c.metadata.uid } : {}),
    ...(c.metadata?.resourceVersion ? { resourceVersion: c.metadata.resourceVersion } : {}),
    labels: { ...(c.metadata?.labels ?? {}) },
    annotations: { ...(c.metadata?.annotations ?? {}) },
    ownerReferences: (c.metadata?.ownerReferences ?? []).map((o) => ({
      apiVersion: o.apiVersion,
      kind: o.kind,
      name: o.name,
      uid: o.uid,
      ...(o.controller !== undefined ? { controller: o.controller } : {}),
      ...(o.blockOwnerDeletion !== undefined ? { blockOwnerDeletion: o.blockOwnerDeletion } : {}),
    })),
    data: { ...(c.data ?? {}) },
    ...(c.binaryData ? { binaryData: { ...c.binaryData } } : {}),
  };
}

/**
 * A JSON merge patch of the fields Swarm owns. Fields it does not mention
 * (finalizers, other labels, annotations and data keys) are left as they are;
 * metadata.resourceVersion makes the API server refuse it (409) if the object
 * changed since it was read, so no update is lost.
 */
export function mergePatchBody(patch: ConfigMapPatch): object {
  return {
    metadata: {
      resourceVersion: patch.resourceVersion,
      ...(patch.labels ? { labels: patch.labels } : {}),
      ...(patch.annotations ? { annotations: patch.annotations } : {}),
      ...(patch.ownerReferences ? { ownerReferences: patch.ownerReferences } : {}),
    },
    ...(patch.data ? { data: patch.data } : {}),
  };
}

export function toV1ConfigMap(cm: ConfigMapView): k8s.V1ConfigMap {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: {
      name: cm.name,
      namespace: cm.namespace,
      ...(cm.resourceVersion ? { resourceVersion: cm.resourceVersion } : {}),
      labels: cm.labels,
      annotations: cm.annotations,
      ownerReferences: cm.ownerReferences,
    },
    data: cm.data,
    ...(cm.binaryData ? { binaryData: cm.binaryData } : {}),
  };
}
