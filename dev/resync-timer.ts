// The local stand-in for knative/base/pingsource.yaml: every period, the same
// resync ping CloudEvent the PingSource sends (lib/events/ping.ts), published
// through the local broker, which routes it by the same Trigger to `assign`.
// Dev tooling only (npm start, npm run serve, the integration harness): in a
// cluster the PingSource does this.
import type { LocalBroker } from './broker/local-broker.js';
import { resyncPingEvent } from '../lib/events/ping.js';

/** As the PingSource's schedule, "* * * * *". */
export const DEFAULT_RESYNC_MS = 60_000;

/** SWARM_RESYNC_SECONDS (0: off), else the PingSource's minute. */
export function resyncPeriodMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.SWARM_RESYNC_SECONDS;
  if (raw === undefined || raw === '') return DEFAULT_RESYNC_MS;
  const seconds = Number(raw);
  if (!Number.isFinite(seconds) || seconds < 0) throw new Error(`SWARM_RESYNC_SECONDS must be a number of seconds (0: off), got ${JSON.stringify(raw)}`);
  return Math.round(seconds * 1000);
}

export interface ResyncTimer {
  /** Sends one ping per namespace now (tests; the timer does it every period). */
  pingNow(): void;
  stop(): void;
}

export function startResyncTimer(broker: Pick<LocalBroker, 'publish'>, namespaces: readonly string[], everyMs: number): ResyncTimer {
  const pingNow = () => namespaces.forEach((namespace) => broker.publish(resyncPingEvent({ namespace })));
  const timer = everyMs > 0 ? setInterval(pingNow, everyMs) : undefined;
  // Never the reason a process stays up.
  timer?.unref();
  return { pingNow, stop: () => clearInterval(timer) };
}
