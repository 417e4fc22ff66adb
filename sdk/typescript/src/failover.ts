// A worker's failover (docs/worker-protocol.md §8, protocol 2), as worker.ts
// uses it: reads failover.yml beside config.yml (absent: protocol 1, none of
// this), keeps the heartbeat (heartbeat.ts) and the fence (fence.ts), holds
// config back while fenced, and answers readiness.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FAILOVER_KEY, FAILOVER_PROTOCOL, parse, parseFailover, type FailoverSettings } from '../../../lib/workerconfig/index.js';
import { admit, breaksFirst, fenceAt, freshAgain, readiness, STARTING, UNFENCED, type Fence, type Readiness } from './fence.js';
import { createHeartbeat, type Heartbeat } from './heartbeat.js';
import type { LeaseApi } from './lease.js';

export interface FailoverOptions {
  pod: string;
  podUid?: string;
  namespace?: string;
  pool: string;
  /** Without them (outside a cluster, no POD_UID) there is no heartbeat, hence no failover. */
  leases?: LeaseApi;
  configPath: string;
  log: { info(fields: object, message: string): void; warn(fields: object, message: string): void };
  now: () => number;
  healthy: () => Promise<boolean>;
  configVersion: () => number | undefined;
  /** How many jobs run now. */
  running: () => number;
  /** Apply this config text (held back while fenced) now. */
  redeliver: (text: string | undefined) => void;
  /** Write the acknowledgement again: one that failed while the API was out of reach was given up. */
  reacknowledge: () => void;
  /** Stop every job; resolves once every stop returned. */
  stopAll: () => Promise<void>;
}

export interface Failover {
  settings(): FailoverSettings | undefined;
  /** The protocol to announce in the acknowledgement: 2 while failover is on. */
  protocol(): string | undefined;
  /** JobContext.mayAct: ownership certain by the worker's own clock. */
  mayAct(): boolean;
  /** Starting a job is allowed now (not fenced). */
  mayStart(): boolean;
  /** True: `text` is held back (fenced); false: apply it. */
  hold(text: string | undefined): boolean;
  ready(worker: { loaded: boolean; stopping: boolean }): Promise<Readiness>;
  start(): void;
  close(): void;
}

export function createFailover(o: FailoverOptions): Failover {
  const path = join(dirname(o.configPath), FAILOVER_KEY);
  let read: FailoverSettings | undefined;
  const load = (): FailoverSettings | undefined => {
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch {
      return (read = undefined); // no file: no failover
    }
    let next: FailoverSettings | undefined;
    try {
      next = parseFailover(text);
    } catch (err) {
      o.log.warn({ err }, 'failover settings rejected, keeping the ones in force');
      return read;
    }
    // Gone stale under MakeBeforeBreak (so not fenced), now told to break first: fence now, as if
    // it went stale under it; otherwise it would answer ready with its jobs and none would move.
    if (stale && !fence.fenced && breaksFirst(next) && !breaksFirst(read)) queueMicrotask(fenceNow);
    return (read = next);
  };
  let fence: Fence = STARTING;
  let fencing = false;
  let stale = false;
  let held: { text: string | undefined } | undefined;

  /** Stale: under BreakBeforeMake stop every job now, before the pod can turn NotReady (W26). */
  function onStale(): void {
    stale = true;
    if (!breaksFirst(settings())) {
      o.log.warn({}, 'heartbeat stale: not ready; keeping my jobs (MakeBeforeBreak)');
      return;
    }
    fenceNow();
  }

  function fenceNow(): void {
    fence = fenceAt(fence, o.configVersion(), o.running());
    o.log.warn({ configVersion: o.configVersion(), running: o.running() }, 'heartbeat stale: fencing, stopping every job');
    fencing = true;
    void o.stopAll().finally(() => (fencing = false));
  }

  const heartbeat: Heartbeat | undefined =
    o.leases && o.podUid && o.namespace
      ? createHeartbeat({
          pod: o.pod,
          podUid: o.podUid,
          namespace: o.namespace,
          pool: o.pool,
          api: o.leases,
          load,
          healthy: o.healthy,
          now: o.now,
          onStale,
          onFresh: () => {
            stale = false;
            o.log.info({}, 'heartbeat fresh');
            if (held) o.redeliver(held.text);
            else {
              fence = freshAgain(fence);
              o.reacknowledge();
            }
          },
          onError: (err) => o.log.warn({ err }, 'heartbeat renewal failed'),
        })
      : undefined;
  const settings = (): FailoverSettings | undefined => heartbeat?.settings();
  const fresh = (): boolean => heartbeat?.fresh() ?? false;

  return {
    settings,
    protocol: () => (settings() ? FAILOVER_PROTOCOL : undefined),
    mayAct: () => !settings() || (fresh() && !fence.fenced),
    mayStart: () => !breaksFirst(settings()) || !fence.fenced,
    hold(text) {
      // failover.yml may have appeared with this config (the ConfigMap made after the worker started):
      // read it with the config, and under BreakBeforeMake run nothing before the first renewal (W27).
      const now = heartbeat ? load() : undefined;
      if (breaksFirst(now) && heartbeat?.lastRenewal() === undefined) {
        if (!fence.fenced) fence = STARTING;
        if (!breaksFirst(settings())) void heartbeat?.tick(); // renew now, not at the next look for the file
      }
      const version = (): number | undefined | 'unreadable' => {
        try {
          return text === undefined ? undefined : parse(text).version;
        } catch {
          return 'unreadable';
        }
      };
      // The file as read now is the freshest word on the handoff (the heartbeat's copy lags up to a renewal).
      const next = admit(fence, breaksFirst(now), fresh(), version);
      if (!next) {
        held = { text };
        return true;
      }
      if (fence.fenced && fence.stoppedJobs) o.log.info({ configVersion: version(), fencedAt: fence.atVersion }, 'resuming after a fence');
      fence = next;
      held = undefined;
      return false;
    },
    ready: async ({ loaded, stopping }) =>
      readiness({ settings: settings(), fresh: fresh(), healthy: await o.healthy(), fence, fencing, loaded, stopping }),
    start() {
      // Only a worker that breaks first waits for its first renewal before it runs anything.
      if (!breaksFirst(settings())) fence = UNFENCED;
      void heartbeat?.tick();
    },
    close: () => heartbeat?.close(),
  };
}
