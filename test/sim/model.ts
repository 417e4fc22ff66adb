// The objects of the simulated cluster, as the model keeps them (plain data in
// the Store), and their conversion to what the API returns: the views of the
// project's Kubernetes port (lib/kube/types.ts) and, for watch events, the
// Kubernetes JSON the ApiServerSource would send.
import type { Swarm } from '../../lib/api/types.js';
import type { ConfigMapView, DeploymentView, LeaseView, PodView, StatefulSetView } from '../../lib/kube/types.js';
import type { KubeObject } from '../../lib/events/types.js';

/** Simulated time 0: every timestamp is this plus the clock. */
export const EPOCH = Date.parse('2026-01-01T00:00:00Z');
/** metav1.Time: second precision (remembered by the second: every pod view of every list formats its times). */
export function stamp(ms: number): string {
  const second = Math.floor(ms / 1000);
  let text = stamps.get(second);
  if (text === undefined) {
    if (stamps.size >= 4096) stamps.clear();
    stamps.set(second, (text = new Date(EPOCH + second * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z')));
  }
  return text;
}
const stamps = new Map<number, string>();

/** How the workers of a pod template behave (the program the user deployed). */
export interface WorkerTemplate {
  /** hot: reloads config.yml when the kubelet updates it; restart: reads it at start only. */
  reload: 'hot' | 'restart';
  /** Writes its acknowledgement Lease (and carries the label that says so). */
  acknowledges: boolean;
  /** terminationGracePeriodSeconds */
  graceSeconds: number;
  /** Template revision: a rollout restart bumps it. */
  revision: number;
}

export interface StatefulSetObj {
  name: string;
  namespace: string;
  uid: string;
  replicas: number;
  startOrdinal: number;
  podManagementPolicy: 'OrderedReady' | 'Parallel';
  template: WorkerTemplate;
  status: { replicas: number; readyReplicas: number };
}

export interface DeploymentObj {
  name: string;
  namespace: string;
  uid: string;
  replicas: number;
  maxSurge: number;
  maxUnavailable: number;
  template: WorkerTemplate;
  status: { replicas: number; readyReplicas: number; replicaFailure?: string };
}

export interface PodObj {
  name: string;
  namespace: string;
  uid: string;
  createdAt: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  ownerStatefulSet?: string;
  ownerReplicaSet?: string;
  template: WorkerTemplate;
  phase: 'Pending' | 'Running';
  ready: boolean;
  readinessChangedAt?: number;
  startedAt?: number;
  waiting?: { reason: string; message?: string };
  unschedulable?: string;
  /** When a delete was accepted (deletionTimestamp set), and by whom. */
  deletion?: { at: number; by: string };
}

export type LeaseObj = Omit<LeaseView, 'resourceVersion'>;
export type ConfigMapObj = Omit<ConfigMapView, 'resourceVersion'>;

export const podKey = (ns: string, name: string): string => `${ns}/${name}`;

export function podView(p: PodObj, rv: number): PodView {
  const refresh = p.annotations['k8slab.info/config-refresh'];
  return {
    name: p.name,
    namespace: p.namespace,
    uid: p.uid,
    resourceVersion: String(rv),
    creationTimestamp: stamp(p.createdAt),
    ready: p.ready,
    terminating: p.deletion !== undefined,
    labels: { ...p.labels },
    ...(p.ownerStatefulSet ? { ownerStatefulSet: p.ownerStatefulSet } : {}),
    ...(p.ownerReplicaSet ? { ownerReplicaSet: p.ownerReplicaSet } : {}),
    phase: p.phase,
    ...(p.unschedulable ? { unschedulable: p.unschedulable } : {}),
    ...(p.waiting ? { waiting: { ...p.waiting } } : {}),
    ...(p.startedAt !== undefined ? { startedAt: stamp(p.startedAt) } : {}),
    ...(p.readinessChangedAt !== undefined ? { readinessChangedAt: stamp(p.readinessChangedAt) } : {}),
    ...(refresh !== undefined && Number.isSafeInteger(Number(refresh)) ? { refreshVersion: Number(refresh) } : {}),
  };
}

export function statefulSetView(s: StatefulSetObj, rv: number): StatefulSetView {
  return {
    kind: 'StatefulSet',
    name: s.name,
    namespace: s.namespace,
    uid: s.uid,
    resourceVersion: String(rv),
    replicas: s.replicas,
    ...(s.startOrdinal ? { startOrdinal: s.startOrdinal } : {}),
    observedReplicas: s.status.replicas,
    labelSelector: `app=${s.name}`,
    readyReplicas: s.status.readyReplicas,
  };
}

export function deploymentView(d: DeploymentObj, rv: number): DeploymentView {
  return {
    kind: 'Deployment',
    name: d.name,
    namespace: d.namespace,
    uid: d.uid,
    resourceVersion: String(rv),
    replicas: d.replicas,
    observedReplicas: d.status.replicas,
    labelSelector: `app=${d.name}`,
    readyReplicas: d.status.readyReplicas,
    ...(d.status.replicaFailure ? { replicaFailure: d.status.replicaFailure } : {}),
  };
}

/** The JSON a resource-mode ApiServerSource event carries (only what Swarm's parser reads, and what a real one has). */
export function kubeObject(kind: string, value: unknown, rv: number): KubeObject {
  const meta = (name: string, namespace: string, extra: Record<string, unknown> = {}) => ({ name, namespace, resourceVersion: String(rv), ...extra });
  switch (kind) {
    case 'Swarm': {
      const s = value as Swarm;
      return { apiVersion: s.apiVersion, kind: 'Swarm', metadata: { ...s.metadata, resourceVersion: String(rv) }, spec: s.spec, ...(s.status ? { status: s.status } : {}) } as unknown as KubeObject;
    }
    case 'StatefulSet': {
      const s = value as StatefulSetObj;
      return { apiVersion: 'apps/v1', kind, metadata: meta(s.name, s.namespace, { uid: s.uid }), spec: { replicas: s.replicas }, status: s.status };
    }
    case 'Deployment': {
      const d = value as DeploymentObj;
      return { apiVersion: 'apps/v1', kind, metadata: meta(d.name, d.namespace, { uid: d.uid }), spec: { replicas: d.replicas }, status: d.status };
    }
    case 'Pod': {
      const p = value as PodObj;
      const owner = p.ownerStatefulSet
        ? [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: p.ownerStatefulSet, controller: true }]
        : p.ownerReplicaSet
          ? [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: p.ownerReplicaSet, controller: true }]
          : [];
      return { apiVersion: 'v1', kind, metadata: meta(p.name, p.namespace, { uid: p.uid, labels: p.labels, ownerReferences: owner }) };
    }
    case 'Lease': {
      const l = value as LeaseObj;
      return { apiVersion: 'coordination.k8s.io/v1', kind, metadata: meta(l.name, l.namespace, { labels: l.labels }) };
    }
    default: {
      const c = value as ConfigMapObj;
      return { apiVersion: 'v1', kind: 'ConfigMap', metadata: meta(c.name, c.namespace, { uid: c.uid, labels: c.labels, ownerReferences: c.ownerReferences }) };
    }
  }
}
