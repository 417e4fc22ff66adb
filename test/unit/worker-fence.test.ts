// Failover in the TypeScript SDK, without a worker around it: the fence's
// rules (fence.ts), the heartbeat over a fake clock and fake timers
// (heartbeat.ts): a partition (renewals failing), a frozen process (the clock
// jumps past the renew deadline), a hung job (the health check fails), and the
// shared timing arithmetic and failover.yml (lib/workerconfig/failover.ts).
import { describe, expect, it } from 'vitest';
import { admit, fenceAt, freshAgain, mayResume, readiness, STARTING, UNFENCED } from '../../sdk/typescript/src/fence.js';
import { createHeartbeat, heartbeatLease, microTime } from '../../sdk/typescript/src/heartbeat.js';
import type { Lease, LeaseApi } from '../../sdk/typescript/src/lease.js';
import { failoverTimings, minimumProbeWindowSeconds, parseFailover, renderFailover, type FailoverSettings } from '../../lib/workerconfig/index.js';

const BBM: FailoverSettings = { leaseSeconds: 15, handoff: 'BreakBeforeMake' };
const MBB: FailoverSettings = { leaseSeconds: 15, handoff: 'MakeBeforeBreak' };

describe('failover settings and timings', () => {
  it('renews every third of the lease and fences at two thirds; the probe window covers the deadline with drift', () => {
    expect(failoverTimings(15)).toEqual({ leaseMs: 15_000, renewIntervalMs: 5000, retryMs: 1000, renewDeadlineMs: 10_000 });
    expect(minimumProbeWindowSeconds(15)).toBeGreaterThan(10);
    expect(minimumProbeWindowSeconds(15)).toBeLessThan(11);
  });

  it('reads back what it renders and refuses anything else as a whole', () => {
    expect(parseFailover(renderFailover(BBM))).toEqual(BBM);
    expect(() => parseFailover('leaseSeconds: 1\nhandoff: BreakBeforeMake\n')).toThrow(/leaseSeconds/);
    expect(() => parseFailover('leaseSeconds: 15\nhandoff: Sometimes\n')).toThrow(/handoff/);
    expect(() => parseFailover('leaseSeconds: 15\nhandoff: MakeBeforeBreak\nextra: 1\n')).toThrow(/unknown field/);
    expect(() => parseFailover('leaseSeconds: 15\nleaseSeconds: 16\nhandoff: MakeBeforeBreak\n')).toThrow();
  });
});

describe('the fence', () => {
  it('lifts once fresh; after stopping jobs, only for a config newer than the one it fenced at', () => {
    const fence = fenceAt(UNFENCED, 7, 2);
    expect(fence).toEqual({ fenced: true, atVersion: 7, stoppedJobs: true });
    expect(mayResume(fence, false, 8)).toBe(false);
    expect(mayResume(fence, true, 7)).toBe(false);
    expect(mayResume(fence, true, 'unreadable')).toBe(false);
    expect(mayResume(fence, true, 8)).toBe(true);
    expect(mayResume(fence, true, undefined)).toBe(true); // no config: it runs nothing
    // Fenced with nothing running: a fresh heartbeat is enough (Swarm has nothing to move, writes nothing).
    expect(mayResume(fenceAt(UNFENCED, 7, 0), true, 7)).toBe(true);
    // … and with no config arriving at all: the heartbeat turning fresh lifts it (the conformance's fence-empty-bbm).
    expect(freshAgain(fenceAt(UNFENCED, 7, 0))).toEqual(UNFENCED);
    expect(freshAgain(fence)).toEqual(fence);
    expect(mayResume(STARTING, true, 3)).toBe(true);
    // Fenced again before it resumed: the first fence's version stands.
    expect(fenceAt(fence, 9, 0)).toEqual({ fenced: true, atVersion: 7, stoppedJobs: true });
  });

  it('holds a config while fenced under BreakBeforeMake; under MakeBeforeBreak the fence lifts and nothing stays held (seed 431, before the handoff became immutable)', () => {
    const fenced = fenceAt(UNFENCED, 39, 16);
    expect(admit(fenced, true, false, () => 41)).toBeUndefined();
    expect(admit(fenced, true, true, () => 41)).toEqual(UNFENCED);
    // The Swarm switched to MakeBeforeBreak while the worker was cut off: it applies what arrives, stale or not,
    // and no older config it held is applied after this one (the simulator's seed 431 stopped 19 jobs so).
    expect(admit(fenced, false, false, () => 41)).toEqual(UNFENCED);
  });

  it('is ready under BreakBeforeMake until its fencing stops returned, under MakeBeforeBreak while fresh and healthy', () => {
    const base = { fresh: true, healthy: true, fence: UNFENCED, fencing: false, loaded: true, stopping: false };
    expect(readiness({ ...base, settings: undefined, fresh: false })).toEqual({ ready: true });
    expect(readiness({ ...base, settings: BBM, fresh: false, fence: fenceAt(UNFENCED, 1, 1), fencing: true })).toEqual({ ready: true });
    expect(readiness({ ...base, settings: BBM, fresh: false, fence: fenceAt(UNFENCED, 1, 1) }).ready).toBe(false);
    expect(readiness({ ...base, settings: BBM, healthy: false })).toEqual({ ready: true }); // a hung job fences it through the heartbeat
    expect(readiness({ ...base, settings: MBB, fresh: false })).toEqual({ ready: false, reason: 'heartbeat stale' });
    expect(readiness({ ...base, settings: MBB, healthy: false })).toEqual({ ready: false, reason: 'jobs unhealthy' });
    expect(readiness({ ...base, settings: MBB, loaded: false })).toEqual({ ready: false, reason: 'share not read yet' });
  });
});

/** Leases by name; `down` makes every call fail as an unreachable API server would. */
class FakeLeases implements LeaseApi {
  readonly byName = new Map<string, Lease>();
  down = false;
  writes = 0;
  private check() {
    if (this.down) throw Object.assign(new Error('no answer'), { code: undefined });
  }
  async read(_ns: string, name: string) {
    this.check();
    return structuredClone(this.byName.get(name));
  }
  async create(_ns: string, lease: Lease) {
    this.check();
    this.writes += 1;
    this.byName.set(lease.metadata!.name!, lease);
    return lease;
  }
  replace = this.create;
}

/** A clock and timers the test moves by hand. */
function fakeTime() {
  let t = 0;
  const timers = new Set<{ at: number; fn: () => void }>();
  return {
    now: () => t,
    setTimer: (fn: () => void, ms: number) => {
      const timer = { at: t + ms, fn };
      timers.add(timer);
      return timer;
    },
    clearTimer: (timer: unknown) => void timers.delete(timer as { at: number; fn: () => void }),
    /** Moves the clock, firing due timers in order; `frozen`: the process was stopped, its timers fire only after. */
    async advance(ms: number, frozen = false) {
      const end = t + ms;
      for (;;) {
        const due = [...timers].filter((x) => x.at <= end).sort((a, b) => a.at - b.at)[0];
        if (!due) break;
        timers.delete(due);
        if (!frozen) t = Math.max(t, due.at);
        else t = end;
        due.fn();
        for (let i = 0; i < 10; i++) await Promise.resolve();
      }
      t = end;
    },
  };
}

function heartbeatWith(settings: FailoverSettings, healthy = () => true) {
  const time = fakeTime();
  const api = new FakeLeases();
  const told: string[] = [];
  const hb = createHeartbeat({
    pod: 'w-0',
    podUid: 'uid-0',
    namespace: 'ns',
    pool: 'w',
    api,
    load: () => settings,
    healthy: async () => healthy(),
    onStale: () => told.push(`stale@${time.now()}`),
    onFresh: () => told.push(`fresh@${time.now()}`),
    now: time.now,
    wallNow: () => new Date(Date.UTC(2026, 0, 1)),
    setTimer: time.setTimer,
    clearTimer: time.clearTimer,
  });
  return { time, api, told, hb };
}

describe('the heartbeat', () => {
  it('renews its own Lease, apart from the acknowledgement and out of the event source, every third of the lease', async () => {
    const { time, api, told, hb } = heartbeatWith(BBM);
    await hb.tick();
    expect(told).toEqual(['fresh@0']);
    const lease = api.byName.get('w-0.heartbeat')!;
    expect(lease.metadata?.labels).toEqual({ 'k8slab.info/heartbeat': 'w' });
    expect(lease.metadata?.labels?.['k8slab.info/swarm']).toBeUndefined();
    expect(lease.spec).toMatchObject({ holderIdentity: 'uid-0', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z' });
    await time.advance(60_000);
    expect(api.writes).toBe(13); // at 0, then every 5 s
    expect(told).toEqual(['fresh@0']);
    hb.close();
  });

  it('goes stale at the renew deadline when its renewals fail (a partition), and fresh at the next one that succeeds', async () => {
    const { time, api, told, hb } = heartbeatWith(BBM);
    await hb.tick();
    await time.advance(5000); // renewed at 5 s
    api.down = true;
    await time.advance(9_999);
    expect(told).toEqual(['fresh@0']);
    await time.advance(1);
    expect(told).toEqual(['fresh@0', 'stale@15000']); // 5 s + the 10 s renew deadline
    expect(hb.fresh()).toBe(false);
    api.down = false;
    await time.advance(1000);
    expect(told).toEqual(['fresh@0', 'stale@15000', 'fresh@16000']);
    hb.close();
  });

  it('counts from when a renewal was sent, so one answered late buys no time', async () => {
    const { hb } = heartbeatWith(MBB);
    await hb.tick();
    expect(hb.lastRenewal()).toBe(0);
    hb.close();
  });

  it('learns it is stale first thing when a frozen process resumes past its deadline', async () => {
    const { time, told, hb } = heartbeatWith(BBM);
    await hb.tick();
    await time.advance(30_000, true); // SIGSTOP for 30 s; then its overdue timers fire
    expect(told.slice(0, 2)).toEqual(['fresh@0', 'stale@30000']);
    hb.close();
  });

  it('stops renewing while a job is unhealthy (hung), and goes stale', async () => {
    let healthy = true;
    const { time, api, told, hb } = heartbeatWith(BBM, () => healthy);
    await hb.tick();
    healthy = false;
    const writes = api.writes;
    await time.advance(20_000);
    expect(api.writes).toBe(writes);
    expect(told).toEqual(['fresh@0', 'stale@10000']);
    hb.close();
  });

  it('writes MicroTime with six fractional digits and takes over a Lease held by an earlier pod', () => {
    expect(microTime(new Date('2026-11-27T10:40:14.123Z'))).toBe('2026-11-27T10:40:14.123000Z');
    const at = new Date('2026-11-27T10:40:14.123Z');
    const o = { pod: 'w-0', podUid: 'new', namespace: 'ns', pool: 'w' };
    expect(heartbeatLease(o, 15, at, { spec: { holderIdentity: 'old' } }).spec).toMatchObject({ holderIdentity: 'new', acquireTime: microTime(at) });
    expect(heartbeatLease(o, 15, at, { spec: { holderIdentity: 'new', acquireTime: 'then' } }).spec?.acquireTime).toBe('then');
  });
});
