// Trigger → the Swarms to reconcile. Swarm and assignment.changed events name
// their Swarm (none for a Swarm update whose copy shows its generation already
// observed: assign's own status write), a ConfigMap event its owner (controller
// reference or label); a resync ping names a namespace, whose Swarms are listed
// (names only).
// StatefulSet, Pod and Lease (a worker's acknowledgement, named after its pod)
// events are mapped through the Swarms naming that StatefulSet, listed fresh
// with a field selector (the event's own copy of the object may be stale), and
// so is a Swarm event's StatefulSet hint. That list is handed to the reconcile,
// which uses it as its own observation of the Swarm instead of reading it again.
// A Deployment pool's Deployment, pods and Leases are mapped alike, through
// the Swarms naming that Deployment (spec.deploymentName).
import type { Swarm } from '../api/types.js';
import type { Trigger } from '../events/types.js';
import { claimant, poolOfEvent, type SwarmKey } from '../decisions/routing.js';
import { classifyFailure } from '../kube/errors.js';
import type { ReconcileEnv } from './env.js';
import { isOwnEcho } from './shortcuts.js';

interface Target {
  key: SwarmKey;
  /** The Swarms naming the same StatefulSet, as listed for this event (absent for assignment.changed events and Swarm events without a hint). */
  claimants?: Swarm[];
}

export async function targetsFor(env: Pick<ReconcileEnv, 'kube' | 'log' | 'shortcuts'>, trigger: Trigger): Promise<Target[]> {
  if (trigger.source === 'swarm') return [{ key: { namespace: trigger.namespace, name: trigger.name } }];
  if (trigger.source === 'ping') {
    try {
      return (await env.kube.listSwarmNames(trigger.namespace)).map((name) => ({ key: { namespace: trigger.namespace, name } }));
    } catch (err) {
      // A namespace this function may not read (not bound, or gone): nothing to resync there, and retrying will not help.
      if (classifyFailure(err).class !== 'permanent') throw err;
      env.log.warn({ namespace: trigger.namespace, err: String(err) }, 'cannot list Swarms; resync ignored');
      return [];
    }
  }
  if (trigger.kind === 'ConfigMap') return trigger.swarm ? [{ key: { namespace: trigger.namespace, name: trigger.swarm } }] : [];
  if (trigger.kind === 'Swarm') {
    // assign's own status write coming back: nothing to read (the echo skip, shortcuts.ts).
    if (isOwnEcho(trigger, env.shortcuts)) return [];
    const key = { namespace: trigger.namespace, name: trigger.name };
    // The Swarms naming the StatefulSet the event's copy named: if the Swarm is
    // among them, that one list is its read and its claim check (observe.ts).
    if (!trigger.statefulSetName) return [{ key }];
    try {
      return [{ key, claimants: await env.kube.listSwarmsNaming(trigger.namespace, trigger.statefulSetName) }];
    } catch (err) {
      // Refused for good: the reconcile meets the refusal again and records it on the Swarm.
      if (classifyFailure(err).class !== 'permanent') throw err;
      return [{ key }];
    }
  }
  // A Deployment pool's objects (the Deployment, its pods, their Leases) map through the Swarms naming the Deployment.
  const pool = poolOfEvent(trigger);
  if (!pool) return [];
  try {
    const claimants = await env.kube.listSwarmsNaming(trigger.namespace, pool.name, pool.kind);
    const owner = claimant(claimants, pool.name, pool.kind);
    return owner ? [{ key: { namespace: trigger.namespace, name: owner.metadata.name }, claimants }] : [];
  } catch (err) {
    // Refused for good (say, a namespace whose access was revoked): there is no
    // Swarm to record it on, so it is logged and the event answered 2xx, not retried.
    if (classifyFailure(err).class !== 'permanent') throw err;
    env.log.warn({ namespace: trigger.namespace, err: String(err) }, 'cannot list Swarms; event ignored');
    return [];
  }
}
