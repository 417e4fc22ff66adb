import { describe, expect, it } from 'vitest';
import { idleLine, percentile, restTable, trialsTable } from '../../bench/failover-figures.js';

describe('bench:failover figures', () => {
  it('percentile: nearest rank', () => {
    expect(percentile([], 50)).toBeUndefined();
    expect(percentile([3, 1, 2], 50)).toBe(2);
    expect(percentile(Array.from({ length: 20 }, (_, i) => i + 1), 95)).toBe(19);
    expect(percentile([5], 95)).toBe(5);
  });

  it('trials: p50/p95/max in seconds, how many within leaseSeconds + 10 s, a missed failover counted as not within', () => {
    const rows = trialsTable([{ fault: 'freeze', handoff: 'MakeBeforeBreak', takeoverMs: [12_000, 14_000, undefined, 26_000], recoveredMs: [20_000, 30_000], restarted: 1 }], 15);
    expect(rows[0]).toContain('25 s');
    expect(rows[2]).toBe('| freeze | MakeBeforeBreak | 4 | 14.0 | 26.0 | 26.0 | 2/4 | 20.0 | 1 |');
  });

  it('rest: per-minute figures beside the renewals expected', () => {
    const rows = restTable([{ workers: 10, windowSeconds: 120, wakeupsPerMinute: 0, apiRequestsPerMinute: 131.6, leasePutsPerMinute: 119.5 }], 15);
    expect(rows[2]).toBe('| 10 | 0.0 | 132 | 120 | 120 | 120 |');
  });

  it('idle: reached zero or not', () => {
    expect(idleLine({ podsStarted: { 'swarm-assign': 2 }, zeroSeconds: 0, watchedSeconds: 360 })).toMatch(/did not reach zero pods within 360 s/);
    expect(idleLine({ toZeroSeconds: 95, podsStarted: { 'swarm-assign': 1, 'swarm-restart': 0 }, zeroSeconds: 200, watchedSeconds: 360 })).toMatch(/95 s after the change, and at zero for 200 s of the 265 s/);
  });
});
