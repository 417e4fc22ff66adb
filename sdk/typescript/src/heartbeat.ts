// The heartbeat (docs/worker-protocol.md §8, protocol 2): while its jobs are
// healthy the worker renews a Lease of its own (`<pod>.heartbeat`, labelled
// k8slab.info/heartbeat so the event source never delivers it: a renewal wakes
// no function), every third of the Swarm's lease length. What matters is the
// worker's own clock: a renewal that succeeded proves, until the renew
// deadline counted from when it was sent, that the worker could reach the API
// server and was not paused. Past the deadline the worker is stale and fences
// itself (worker.ts). A timer armed at the deadline notices a pause too: a
// process resumed after SIGCONT runs its overdue timers first thing.
import { FAILOVER_PROTOCOL, HEARTBEAT_LABEL, failoverTimings, heartbeatLeaseName, type FailoverSettings } from '../../../lib/workerconfig/index.js';
import type { Lease, LeaseApi } from './lease.js';

export interface HeartbeatOptions {
  pod: string;
  podUid: string;
  namespace: string;
  pool: string;
  api: LeaseApi;
  /** Reads the settings (failover.yml) again: at every beat; undefined: no failover, no heartbeat. */
  load: () => FailoverSettings | undefined;
  /** The worker's own check of its jobs: no renewal while it fails. */
  healthy: () => Promise<boolean>;
  /** Called once each time the heartbeat goes stale, and once each time it is fresh again. */
  onStale: () => void;
  onFresh: () => void;
  onError?: (error: unknown) => void;
  /** A monotonic clock in ms (default performance.now) and the wall clock for renewTime; tests give fakes. */
  now?: () => number;
  wallNow?: () => Date;
  setTimer?: (fn: () => void, ms: number) => unknown;
  clearTimer?: (timer: unknown) => void;
}

export interface Heartbeat {
  /** The settings as last read (undefined: no failover: the worker neither renews nor fences). */
  settings(): FailoverSettings | undefined;
  /** Renewed within the renew deadline, by the worker's clock: its ownership of its jobs is certain. */
  fresh(): boolean;
  /** When the last renewal that succeeded was sent (monotonic ms), if any. */
  lastRenewal(): number | undefined;
  /** Renew now (and on schedule after); also re-reads the settings. */
  tick(): Promise<void>;
  close(): void;
}

/** Kubernetes MicroTime: RFC 3339 with exactly six fractional digits. */
export const microTime = (d: Date): string => d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

/** The heartbeat Lease as it should read after a renewal (pure); fields it does not own are kept. */
export function heartbeatLease(o: { pod: string; podUid: string; namespace: string; pool: string }, leaseSeconds: number, at: Date, current?: Lease): Lease {
  const taken = current?.spec?.holderIdentity !== o.podUid;
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...(current?.metadata ?? {}),
      name: heartbeatLeaseName(o.pod),
      namespace: o.namespace,
      labels: { ...(current?.metadata?.labels ?? {}), [HEARTBEAT_LABEL]: o.pool },
      annotations: { ...(current?.metadata?.annotations ?? {}), 'k8slab.info/worker-protocol': FAILOVER_PROTOCOL },
    },
    spec: {
      ...(current?.spec ?? {}),
      holderIdentity: o.podUid,
      leaseDurationSeconds: leaseSeconds,
      renewTime: microTime(at),
      ...(taken ? { acquireTime: microTime(at) } : {}),
    },
  };
}

export function createHeartbeat(options: HeartbeatOptions): Heartbeat {
  const now = options.now ?? (() => performance.now());
  const wallNow = options.wallNow ?? (() => new Date());
  const setTimer = options.setTimer ?? ((fn, ms) => setTimeout(fn, ms).unref());
  const clearTimer = options.clearTimer ?? ((t) => clearTimeout(t as NodeJS.Timeout));
  const name = heartbeatLeaseName(options.pod);
  let current: Lease | undefined;
  let renewed: number | undefined;
  let stale = true; // not fresh before the first renewal: onFresh then says so
  let closed = false;
  let next: unknown;
  let deadline: unknown;
  let running: Promise<void> | undefined;
  let settings = options.load();
  /** With no failover, how often failover.yml is looked for again. */
  const LOOK_AGAIN_MS = 5000;

  const deadlineMs = () => {
    return settings ? failoverTimings(settings.leaseSeconds).renewDeadlineMs : Infinity;
  };
  const fresh = () => renewed !== undefined && now() - renewed < deadlineMs();

  /** Stale or fresh, told once per change; called on every renewal and at the deadline. */
  function judge(): void {
    if (closed || !settings) return;
    const isFresh = fresh();
    if (!isFresh && !stale) {
      stale = true;
      options.onStale();
    } else if (isFresh && stale) {
      stale = false;
      options.onFresh();
    }
    if (isFresh) {
      if (deadline !== undefined) clearTimer(deadline);
      deadline = setTimer(judge, Math.max(0, renewed! + deadlineMs() - now()));
    }
  }

  async function renew(settings: FailoverSettings): Promise<boolean> {
    if (closed) return false;
    const sentAt = now();
    const body = heartbeatLease(options, settings.leaseSeconds, wallNow(), current);
    try {
      current = current ? await options.api.replace(options.namespace, body) : await options.api.create(options.namespace, body);
    } catch (error) {
      const code = (error as { code?: unknown })?.code;
      // A conflict, or a Lease already there (409 on create): read it again for the next try.
      if (code === 409 || code === 404) current = await options.api.read(options.namespace, name).catch(() => undefined);
      options.onError?.(error);
      return false;
    }
    renewed = renewed === undefined ? sentAt : Math.max(renewed, sentAt);
    return true;
  }

  async function beat(): Promise<void> {
    settings = options.load();
    if (next !== undefined) clearTimer(next);
    if (!settings) {
      // No failover (protocol 1): nothing to renew; look for the settings again later.
      next = setTimer(() => void tick(), LOOK_AGAIN_MS);
      return;
    }
    const ok = (await options.healthy().catch(() => false)) && (await renew(settings));
    judge();
    if (closed) return;
    const t = failoverTimings(settings.leaseSeconds);
    if (next !== undefined) clearTimer(next);
    next = setTimer(() => void tick(), ok ? t.renewIntervalMs : t.retryMs);
  }

  function tick(): Promise<void> {
    if (closed) return Promise.resolve();
    judge(); // first: a resumed process learns it is stale before anything else it does
    running ??= beat().finally(() => (running = undefined));
    return running;
  }

  return {
    settings: () => settings,
    fresh,
    lastRenewal: () => renewed,
    tick,
    close() {
      closed = true;
      if (next !== undefined) clearTimer(next);
      if (deadline !== undefined) clearTimer(deadline);
    },
  };
}
