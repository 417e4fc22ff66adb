// npm start's stand-in for the PingSource: the same ping, through the local broker, every period.
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { CloudEvent } from 'cloudevents';
import { DEFAULT_RESYNC_MS, resyncPeriodMs, startResyncTimer } from '../../dev/resync-timer.js';
import { toTrigger } from '../../lib/events/trigger.js';

afterEach(() => vi.useRealTimers());

describe('the dev resync timer', () => {
  it('publishes one resync ping per namespace every period, the trigger the PingSource\'s event makes', () => {
    vi.useFakeTimers();
    const sent: CloudEvent<unknown>[] = [];
    const timer = startResyncTimer({ publish: (e) => sent.push(e) }, ['a', 'b'], 1000);
    vi.advanceTimersByTime(2500);
    expect(sent.map((e) => toTrigger(e as never))).toEqual([
      { source: 'ping', type: 'resync', namespace: 'a' },
      { source: 'ping', type: 'resync', namespace: 'b' },
      { source: 'ping', type: 'resync', namespace: 'a' },
      { source: 'ping', type: 'resync', namespace: 'b' },
    ]);
    expect(new Set(sent.map((e) => e.id)).size).toBe(4);
    timer.stop();
    vi.advanceTimersByTime(5000);
    expect(sent).toHaveLength(4);
  });

  it('period 0 is off (pings only when asked)', () => {
    vi.useFakeTimers();
    const sent: unknown[] = [];
    const timer = startResyncTimer({ publish: (e) => sent.push(e) }, ['a'], 0);
    vi.advanceTimersByTime(DEFAULT_RESYNC_MS * 3);
    expect(sent).toEqual([]);
    timer.pingNow();
    expect(sent).toHaveLength(1);
  });

  it('reads SWARM_RESYNC_SECONDS, default the PingSource\'s minute', () => {
    expect(resyncPeriodMs({})).toBe(60_000);
    expect(resyncPeriodMs({ SWARM_RESYNC_SECONDS: '5' })).toBe(5000);
    expect(resyncPeriodMs({ SWARM_RESYNC_SECONDS: '0' })).toBe(0);
    expect(() => resyncPeriodMs({ SWARM_RESYNC_SECONDS: 'soon' })).toThrow(/SWARM_RESYNC_SECONDS/);
  });
});
