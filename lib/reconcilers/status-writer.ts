// Write a Swarm's status only when it differs, guarded by the resourceVersion
// read this reconcile, and report condition changes as Kubernetes Events.
import { API_VERSION, KIND, type Swarm, type SwarmStatus } from '../api/types.js';
import { jsonEqual } from '../decisions/equal.js';
import { conditionEvents, type ConditionEvent } from '../decisions/condition-events.js';
import type { ReconcileEnv } from './env.js';

/** Returns the number of API writes made (0 or 1, plus events). */
export async function writeStatus(env: ReconcileEnv, swarm: Swarm, status: SwarmStatus): Promise<number> {
  if (jsonEqual(swarm.status ?? {}, status)) return 0;
  await env.kube.replaceSwarmStatus({ ...swarm, status });
  let writes = 1;
  // Only the instance whose guarded write succeeded reports the change, so
  // concurrent instances do not duplicate Events.
  for (const ev of conditionEvents(swarm.status?.conditions, status.conditions ?? [])) writes += await recordEvent(env, swarm, ev);
  return writes;
}

/** A Kubernetes Event about the Swarm; returns the writes made (0 or 1). */
export async function recordEvent(env: ReconcileEnv, swarm: Swarm, ev: ConditionEvent): Promise<number> {
  try {
    await env.kube.createEvent({
      namespace: swarm.metadata.namespace,
      involvedObject: {
        apiVersion: API_VERSION,
        kind: KIND,
        name: swarm.metadata.name,
        namespace: swarm.metadata.namespace,
        ...(swarm.metadata.uid ? { uid: swarm.metadata.uid } : {}),
      },
      type: ev.type,
      reason: ev.reason,
      message: ev.message,
      reportingComponent: env.component,
    });
    return 1;
  } catch (err) {
    // Events are best effort, like client-go's recorder: never fail a reconcile for one.
    env.log.warn({ err: String(err), reason: ev.reason }, 'could not record event');
    return 0;
  }
}
