// The write of a decided ConfigMap as a merge patch: only what Swarm changes.
import type { ConfigMapPatch, ConfigMapView } from '../kube/types.js';
import { jsonEqual } from './equal.js';

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
