// What a Swarm's status was judged from, kept in status.observed as digests:
// the pool, its pods, the workers' acknowledgement Leases and the ConfigMap,
// each as the decisions see it (the views of lib/kube/types.ts, less their
// resourceVersions: a version moves on changes no decision reads). With the
// Swarm's generation (observedGeneration), they say which world the status
// describes, so an event can be judged by reading only its own object: if it
// digests as recorded, the reconcile would find nothing new (glance.ts).
import { createHash } from 'node:crypto';
import type { ObservedStatus } from '../api/types.js';
import type { ConfigMapView, LeaseView, PodView, PoolView } from '../kube/types.js';

/** status.observed without its deadline (judgeStatus adds that). */
export type ObservedDigests = Omit<ObservedStatus, 'until'>;

/** One of the objects status is judged from, as an event names it. */
export type Aspect = keyof ObservedDigests;

/** JSON with keys sorted at every depth and undefined dropped: equal data, equal text. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
}

const digest = (value: unknown): string => `sha256:${createHash('sha256').update(canonical(value)).digest('hex')}`;

/** Drops the version: it changes with fields the decisions never read (a condition's probe time). */
const unversioned = <T extends { resourceVersion?: string }>({ resourceVersion: _version, ...rest }: T) => rest;
const byName = <T extends { name: string }>(xs: readonly T[]) => [...xs].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));

export const poolDigest = (pool: PoolView | undefined): string => digest(pool ? unversioned(pool) : null);
export const podsDigest = (pods: readonly PodView[]): string => digest(byName(pods).map(unversioned));
export const leasesDigest = (leases: readonly LeaseView[]): string => digest(byName(leases).map(unversioned));
/** What the decisions read of a ConfigMap: its data, labels, annotations and owners (not binaryData, never read). */
export const configMapDigest = (cm: ConfigMapView | undefined): string =>
  digest(cm ? { labels: cm.labels, annotations: cm.annotations, ownerReferences: cm.ownerReferences, data: cm.data } : null);

export function observedDigests(obs: {
  pool: PoolView | undefined;
  pods: readonly PodView[];
  leases: readonly LeaseView[];
  configMap: ConfigMapView | undefined;
}): ObservedDigests {
  return { pool: poolDigest(obs.pool), pods: podsDigest(obs.pods), leases: leasesDigest(obs.leases), configMap: configMapDigest(obs.configMap) };
}
