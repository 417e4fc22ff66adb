// Trigger → the Swarms to reconcile. Swarm and assignment.changed events name
// their Swarm; StatefulSet and Pod events are mapped through the Swarms of the
// namespace (read fresh: the event's own copy of the object may be stale).
import type { Trigger } from '../events/types.js';
import { statefulSetOfPod, swarmsForStatefulSet, type SwarmKey } from '../decisions/routing.js';
import { classifyFailure } from '../kube/errors.js';
import type { ReconcileEnv } from './env.js';

export async function swarmKeysFor(env: Pick<ReconcileEnv, 'kube' | 'log'>, trigger: Trigger): Promise<SwarmKey[]> {
  if (trigger.source === 'swarm' || trigger.kind === 'Swarm') return [{ namespace: trigger.namespace, name: trigger.name }];
  const statefulSet = trigger.kind === 'StatefulSet' ? trigger.name : statefulSetOfPod(trigger.name, trigger.ownerStatefulSet);
  if (!statefulSet) return [];
  try {
    return swarmsForStatefulSet(trigger.namespace, await env.kube.listSwarms(trigger.namespace), statefulSet);
  } catch (err) {
    // Refused for good (say, a namespace whose access was revoked): there is no
    // Swarm to record it on, so it is logged and the event answered 2xx, not retried.
    if (classifyFailure(err).class !== 'permanent') throw err;
    env.log.warn({ namespace: trigger.namespace, err: String(err) }, 'cannot list Swarms; event ignored');
    return [];
  }
}
