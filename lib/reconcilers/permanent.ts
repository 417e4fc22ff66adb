// A permanent API failure (403, 422, a create in a missing namespace) is not
// retried: the broker would retry it seven times and dead-letter the event, and
// nothing would tell the user. Instead the Swarm gets a Degraded condition and a
// Warning Event naming the call and the cause, and the event is answered 2xx;
// the next event or periodic resync recovers once the cause is fixed.
import { classifyFailure, KubeError, type PermanentReason } from '../kube/errors.js';
import type { SwarmKey } from '../decisions/routing.js';
import { boundMessage } from '../decisions/condition-messages.js';
import { computeStatus } from '../decisions/status.js';
import type { ReconcileEnv } from './env.js';
import { rfc3339 } from './env.js';
import { recordEvent, writeStatus } from './status-writer.js';

export interface PermanentFailure {
  reason: PermanentReason;
  message: string;
  /** API writes made while reporting it (status and Events). */
  writes: number;
}

/**
 * undefined: `err` is not permanent (the caller rethrows it: 503, or a conflict retry).
 * `owner: 'event-only'` (restart, which owns no field of status): a Warning Event
 * on the Swarm, not a Degraded condition, so status keeps its one writer.
 */
export async function reportPermanent(
  env: ReconcileEnv,
  key: SwarmKey,
  err: unknown,
  owner: 'status' | 'event-only' = 'status',
): Promise<PermanentFailure | undefined> {
  const failure = classifyFailure(err);
  if (failure.class !== 'permanent') return undefined;
  const message = err instanceof KubeError ? err.message : String(err);
  env.log.warn({ swarm: `${key.namespace}/${key.name}`, reason: failure.reason, err: message }, 'the API refused for good; recorded on the Swarm, not retried');
  let writes = 0;
  try {
    const swarm = await env.kube.getSwarm(key.namespace, key.name);
    if (swarm && !swarm.metadata.deletionTimestamp) {
      const problem = { reason: failure.reason, message };
      if (owner === 'status') writes = await writeStatus(env, swarm, computeStatus({ swarm, now: rfc3339(env.now()), problem, pods: [] }));
      else writes = await recordEvent(env, swarm, { type: 'Warning', reason: failure.reason, message: boundMessage(message) });
    }
  } catch (statusErr) {
    // A transient failure or a conflict here is worth a retry (503); a refused
    // status write is final: it is logged, and the event is answered 2xx all the same.
    if (classifyFailure(statusErr).class !== 'permanent') throw statusErr;
    env.log.warn({ swarm: `${key.namespace}/${key.name}`, err: String(statusErr) }, 'could not record the failure on the Swarm either');
  }
  return { reason: failure.reason, message, writes };
}
