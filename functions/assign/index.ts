// assign: Swarm, StatefulSet and Lease (acknowledgement) events in → the Swarm's worker ConfigMap and
// status converged → `assignment.changed` replied when restarts are due.
import { assignmentChangedEvent } from '../../lib/events/assignment-changed.js';
import type { Trigger } from '../../lib/events/types.js';
import { keyString } from '../../lib/decisions/routing.js';
import { reconcileAssign, type AssignOutcome } from '../../lib/reconcilers/assign.js';
import type { Coalescer } from '../../lib/reconcilers/coalesce.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { targetsFor } from '../../lib/reconcilers/keys.js';
import type { FunctionResponse, SwarmFunction } from '../function.js';

export function assignFunction(env: ReconcileEnv, coalescer: Coalescer, onOutcome?: (o: AssignOutcome) => void): SwarmFunction {
  return {
    name: 'assign',
    accepts: (t: Trigger) => t.source === 'apiserver' && (t.kind === 'Swarm' || t.kind === 'StatefulSet' || t.kind === 'Lease'),
    async handle(trigger): Promise<FunctionResponse> {
      const targets = await targetsFor(env, trigger);
      const runs = await Promise.all(
        // A coalesced follow-up runs after another reconcile's writes: it reads afresh.
        targets.map(({ key, claimants }) => coalescer.run(`assign:${keyString(key)}`, (followUp) => reconcileAssign(env, key, followUp ? undefined : claimants))),
      );
      runs.forEach((r) => onOutcome?.(r.value));
      const summary = { function: 'assign', swarms: runs.map((r) => ({ ...summarize(r.value), coalesced: r.shared })) };
      // One reply per response (Knative takes one); a coalesced caller leaves it to the first.
      const notify = runs.find((r) => !r.shared && r.value.notify && r.value.swarmUid && r.value.version !== undefined)?.value;
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

const summarize = (o: AssignOutcome) => ({
  swarm: keyString(o.key),
  result: o.result,
  ...(o.reason ? { reason: o.reason, message: o.message } : {}),
  ...(o.version !== undefined ? { version: o.version } : {}),
  changedWorkers: o.changedWorkers,
  moved: o.moved,
  writes: o.writes,
});
