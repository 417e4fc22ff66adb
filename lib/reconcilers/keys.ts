// Trigger → the Swarms to reconcile. Swarm and assignment.changed events name
// their Swarm; StatefulSet and Pod events are mapped through the Swarms of the
// namespace (read fresh: the event's own copy of the object may be stale).
import type { Trigger } from '../events/types.js';
import { statefulSetOfPod, swarmsForStatefulSet, type SwarmKey } from '../decisions/routing.js';
import type { ReconcileEnv } from './env.js';

export async function swarmKeysFor(env: Pick<ReconcileEnv, 'kube'>, trigger: Trigger): Promise<SwarmKey[]> {
  if (trigger.source === 'swarm' || trigger.kind === 'Swarm') return [{ namespace: trigger.namespace, name: trigger.name }];
  const statefulSet = trigger.kind === 'StatefulSet' ? trigger.name : statefulSetOfPod(trigger.name, trigger.ownerStatefulSet);
  if (!statefulSet) return [];
  return swarmsForStatefulSet(trigger.namespace, await env.kube.listSwarms(trigger.namespace), statefulSet);
}
