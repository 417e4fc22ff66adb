// restart: `assignment.changed` in (assign's reply while restarts are due,
// resync included) → pods still holding an older share deleted, in handoff
// order and within maxUnavailable. Pod events go to assign alone: with no
// restart due (policy None, always) they would only wake this function for nothing.
import type { Trigger } from '../../lib/events/types.js';
import { keyString } from '../../lib/decisions/routing.js';
import type { Coalescer } from '../../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { targetsFor } from '../../lib/reconcilers/keys.js';
import { reconcileRestart, type RestartOutcome } from '../../lib/reconcilers/restart.js';
import type { FunctionResponse, SwarmFunction } from '../function.js';

export function restartFunction(env: ReconcileEnv, coalescer: Coalescer, onOutcome?: (o: RestartOutcome) => void): SwarmFunction {
  return {
    name: 'restart',
    accepts: (t: Trigger) => t.source === 'swarm',
    async handle(trigger): Promise<FunctionResponse> {
      const targets = await targetsFor(env, trigger);
      const runs = await Promise.all(
        // A coalesced follow-up runs after another reconcile's writes: it reads afresh.
        targets.map(({ key, claimants }) => coalescer.run(`restart:${keyString(key)}`, (followUp) => reconcileRestart(env, key, followUp ? undefined : claimants))),
      );
      runs.forEach((r) => onOutcome?.(r.value));
      return {
        status: 202,
        summary: {
          function: 'restart',
          swarms: runs.map(({ value: o, shared }) => ({
            swarm: keyString(o.key),
            result: o.result,
            restarted: o.restarted,
            outstanding: o.outstanding,
            ...(o.waiting ? { waiting: o.waiting } : {}),
            writes: o.writes,
            coalesced: shared,
          })),
        },
      };
    },
  };
}
