// Which Swarms an event concerns. An event is only a trigger: this maps it to
// Swarm keys; the reconcilers then read everything fresh from the API.
import type { Swarm } from '../api/types.js';
import { ordinalOf } from './workers.js';

export interface SwarmKey {
  namespace: string;
  name: string;
}

export const keyString = (k: SwarmKey): string => `${k.namespace}/${k.name}`;

/**
 * The Swarm that manages a StatefulSet: the oldest one naming it (name breaks
 * ties), so two Swarms claiming one StatefulSet never both write or restart.
 */
export function claimant(swarms: readonly Swarm[], statefulSet: string): Swarm | undefined {
  return swarms
    .filter((s) => s.spec?.statefulSetName === statefulSet && !s.metadata.deletionTimestamp)
    .sort(
      (a, b) =>
        (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
        a.metadata.name.localeCompare(b.metadata.name),
    )[0];
}

/** The StatefulSet a worker pod belongs to: its controller reference, else its name `<sts>-<ordinal>`. */
export function statefulSetOfPod(podName: string, ownerStatefulSet: string | undefined): string | undefined {
  if (ownerStatefulSet) return ownerStatefulSet;
  const m = /^(.+)-(0|[1-9]\d*)$/.exec(podName);
  return m && m[1] !== undefined && ordinalOf(m[1], podName) !== undefined ? m[1] : undefined;
}
