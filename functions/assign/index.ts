// assign: Swarm, StatefulSet, Deployment, worker Pod, Lease (acknowledgement) and worker ConfigMap events,
// and the periodic resync ping, in → the Swarm's worker ConfigMap and status
// converged → `assignment.changed` replied while restarts are due (the one way
// `restart` hears of them).
import { assignmentChangedEvent } from '../../lib/events/assignment-changed.js';
import type { Trigger } from '../../lib/events/types.js';
import { keyString } from '../../lib/decisions/routing.js';
import { reconcileAssign, type AssignOutcome } from '../../lib/reconcilers/assign.js';
import type { Coalescer } from '../../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { targetsFor } from '../../lib/reconcilers/keys.js';
import { boundedAll } from '../../lib/reconcilers/bounded.js';
import type { FunctionResponse, SwarmFunction } from '../function.js';

export function assignFunction(env: ReconcileEnv, coalescer: Coalescer, onOutcome?: (o: AssignOutcome) => void): SwarmFunction {
  return {
    name: 'assign',
    accepts: (t: Trigger) =>
      t.source === 'ping' || (t.source === 'apiserver' && (t.kind === 'Swarm' || t.kind === 'StatefulSet' || t.kind === 'Deployment' || t.kind === 'Pod' || t.kind === 'Lease' || t.kind === 'ConfigMap')),
    async handle(trigger): Promise<FunctionResponse> {
      const targets = await targetsFor(env, trigger);
      // A resync names every Swarm of a namespace: each is reconciled as if it
      // had its own event, a few at a time, and one failing does not stop the rest.
      const runs = await boundedAll(
        targets.map(({ key, claimants }) => () =>
          // A coalesced follow-up runs after another reconcile's writes: it reads afresh.
          coalescer.run(`assign:${keyString(key)}`, (followUp) => reconcileAssign(env, key, followUp ? undefined : claimants)),
        ),
        RESYNC_CONCURRENCY,
      );
      runs.forEach((r) => onOutcome?.(r.value));
      const summary = { function: 'assign', swarms: runs.map((r) => ({ ...summarize(r.value), coalesced: r.shared })) };
      // One reply per response (Knative takes one); a coalesced caller leaves it to the first. A
      // resync may find several Swarms with restarts due: one drawn at random is told, so none is
      // starved by another that stays due (a stuck rollout); their own events tell restart too.
      const due = runs.filter((r) => !r.shared && r.value.notify && r.value.swarmUid && r.value.version !== undefined).map((r) => r.value);
      const notify = due[Math.floor((env.random?.() ?? Math.random()) * due.length)];
      if (!notify) return { status: 202, summary };
      const reply = assignmentChangedEvent({
        swarm: { namespace: notify.key.namespace, name: notify.key.name, uid: notify.swarmUid ?? '' },
        version: notify.version ?? 0,
        workers: notify.changedWorkers,
      });
      return { status: 200, summary, reply };
    },
  };
}

/** Reconciles in flight at once for one event (a resync names every Swarm of a namespace). */
const RESYNC_CONCURRENCY = 4;

const summarize = (o: AssignOutcome) => ({
  swarm: keyString(o.key),
  result: o.result,
  ...(o.reason ? { reason: o.reason, message: o.message } : {}),
  ...(o.version !== undefined ? { version: o.version } : {}),
  changedWorkers: o.changedWorkers,
  moved: o.moved,
  writes: o.writes,
});
