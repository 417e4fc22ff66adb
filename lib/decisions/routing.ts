// Which Swarms an event concerns. An event is only a trigger: this maps it to
// Swarm keys; the reconcilers then read everything fresh from the API.
import { poolOf, type PoolRef, type Swarm } from '../api/types.js';
import { compareNames } from '../assignment/jobs.js';
import { parseWorker } from '../assignment/workers.js';
import type { ApiServerTrigger } from '../events/types.js';

export interface SwarmKey {
  namespace: string;
  name: string;
}

export const keyString = (k: SwarmKey): string => `${k.namespace}/${k.name}`;

/**
 * The Swarm that manages a StatefulSet (kind Deployment: a Deployment): the
 * oldest one naming it (name breaks ties), so two Swarms claiming one pool
 * never both write or restart.
 */
export function claimant(swarms: readonly Swarm[], statefulSet: string, kind: PoolRef['kind'] = 'StatefulSet'): Swarm | undefined {
  const names = (s: Swarm) => {
    const pool = poolOf(s.spec);
    return pool.kind === kind && pool.name === statefulSet;
  };
  return swarms
    .filter((s) => names(s) && !s.metadata.deletionTimestamp)
    .sort(
      (a, b) =>
        // Code-unit order (RFC 3339 timestamps sort as strings): the same in every process, whatever its locale.
        compareNames(a.metadata.creationTimestamp ?? '', b.metadata.creationTimestamp ?? '') || compareNames(a.metadata.name, b.metadata.name),
    )[0];
}

/** The StatefulSet a worker pod belongs to: its controller reference, else its name `<sts>-<ordinal>`. */
export function statefulSetOfPod(podName: string, ownerStatefulSet: string | undefined): string | undefined {
  if (ownerStatefulSet) return ownerStatefulSet;
  return parseWorker(podName)?.statefulSet;
}

/**
 * The pool a pool object's event concerns: a Deployment pool's Deployment, pods
 * and Leases name their Deployment; otherwise the StatefulSet itself, or the
 * one a pod (or its Lease, named after it) belongs to. Undefined for Swarms and ConfigMaps.
 */
export function poolOfEvent(trigger: ApiServerTrigger): PoolRef | undefined {
  if (trigger.kind === 'Swarm' || trigger.kind === 'ConfigMap') return undefined;
  const deployment = trigger.kind === 'Deployment' ? trigger.name : trigger.deploymentName;
  if (deployment !== undefined) return { kind: 'Deployment', name: deployment };
  const statefulSet = trigger.kind === 'StatefulSet' ? trigger.name : statefulSetOfPod(trigger.name, trigger.ownerStatefulSet);
  return statefulSet ? { kind: 'StatefulSet', name: statefulSet } : undefined;
}
