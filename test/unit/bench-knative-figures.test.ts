import { describe, expect, it } from 'vitest';
import { coldTable, dominantPart, logEntry, p50max, processStartMs, warmTable, writeBracket, type ColdRun } from '../../bench/knative-figures.js';

const run = (at: number, parts: number[]): ColdRun => {
  const keys = ['scaledUpAt', 'podCreatedAt', 'scheduledAt', 'processStartAt', 'listeningAt', 'receivedAt', 'answeredAt'] as const;
  let t = at;
  return Object.fromEntries([['writtenAt', at], ...keys.map((k, i) => [k, (t += parts[i]!)])]) as unknown as ColdRun;
};

describe('bench:knative figures', () => {
  it('takes the lower middle as the median and the largest as the maximum, skipping what was not seen', () => {
    expect(p50max([3, 1, 2])).toEqual({ p50: 2, max: 3, n: 3 });
    expect(p50max([4, 1, undefined, 3, 2])).toEqual({ p50: 2, max: 4, n: 4 });
    expect(p50max([undefined])).toBeUndefined();
  });

  it('cuts the cold path into consecutive parts that add up to the whole, and names the largest', () => {
    const runs = [run(1_000, [2000, 100, 50, 900, 400, 200, 100]), run(50_000, [2500, 120, 40, 800, 500, 300, 50])];
    const table = coldTable(runs);
    expect(table[2]).toBe('| write → Deployment scaled up | 2.00 | 2.50 | 2.00 | 2.50 |');
    expect(table.find((r) => r.startsWith('| → answered'))).toBe('| → answered | 0.05 | 0.10 | 0.10 | 0.05 |');
    expect(table.find((r) => r.includes('write → first event answered'))).toBe('| **write → first event answered** | 3.75 | 4.31 | 3.75 | 4.31 |');
    expect(dominantPart(runs)).toMatchObject({ name: 'write → Deployment scaled up', p50: 2000 });
    expect(dominantPart(runs)?.share).toBeCloseTo(2000 / 3750);
  });

  it('shows a part it did not see as a dash', () => {
    const { listeningAt: _, ...unseen } = run(0, [1, 1, 1, 1, 1, 1, 1]);
    expect(coldTable([unseen]).find((r) => r.startsWith('| → listening'))).toBe('| → listening | — | — | — |');
    expect(warmTable([{ writtenAt: 0 }])[2]).toBe('| **write → event answered** | — | — | — |');
  });

  it("splits a warm answer into the event's way to the function and its time inside, and brackets the write", () => {
    const runs = [{ requestedAt: 990, writtenAt: 1000, answeredAt: 1300, handlerMs: 60 }];
    expect(warmTable(runs).slice(2)).toEqual([
      '| **write → event answered** | 0.30 | 0.30 | 0.30 |',
      '| write → event in the function | 0.24 | 0.24 | 0.24 |',
      '| in the function (`ms` of `handled`) | 0.06 | 0.06 | 0.06 |',
    ]);
    expect(writeBracket([...runs, { writtenAt: 5 }])).toEqual({ p50: 10, max: 10, n: 1 });
  });

  it("reads pino's lines and skips anything else", () => {
    expect(logEntry('{"level":30,"time":1700000000123,"msg":"handled","type":"dev.knative.apiserver.resource.update","ms":42}')).toEqual({
      msg: 'handled',
      time: 1700000000123,
      type: 'dev.knative.apiserver.resource.update',
      ms: 42,
    });
    expect(logEntry('not json')).toBeUndefined();
    expect(logEntry('{"msg":"no time"}')).toBeUndefined();
  });

  it("dates a process from /proc's starttime ticks and the uptime, a comm with spaces and parentheses included", () => {
    // Fields 3…21 are filler; field 22 (starttime) = 250_000 ticks = 2500 s after boot.
    const stat = `1234 (node (x) y) S ${Array.from({ length: 18 }, (_, i) => i + 4).join(' ')} 250000 99 100`;
    // Booted 3000 s before now: the process started 500 s ago.
    expect(processStartMs(stat, '3000.00 100.00\n', 10_000_000, 100)).toBe(10_000_000 - 500_000);
  });
});
