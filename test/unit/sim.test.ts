// The simulator itself (test/sim): one seed gives one run, byte for byte; the
// regression corpus holds (each defect it names stays fixed). The fixed campaign
// is `npm run test:sim`'s (after this tier in `npm test`); long campaigns are
// `npm run sim`'s (bench/RESULTS.md).
import { describe, expect, it } from 'vitest';
import { loadCorpus } from '../sim/corpus.js';
import { generate } from '../sim/schedule.js';
import { run } from '../sim/world.js';

describe('the simulator', () => {
  it('replays a seed byte for byte', async () => {
    const schedule = generate(4242);
    const short = { ...schedule, actions: schedule.actions.filter((a) => a.at < 8 * 60_000), activeMs: 8 * 60_000 };
    const first = await run(short, { trace: true });
    const second = await run(short, { trace: true });
    expect(first.trace.length).toBeGreaterThan(100);
    expect(second.trace).toEqual(first.trace);
  }, 120_000);

  for (const entry of loadCorpus()) {
    if (entry.open) {
      it(`corpus: ${entry.name} is still found (${entry.invariant}; open)`, async () => {
        const result = await run(entry.schedule);
        expect(result.violations.map((v) => v.invariant)).toContain(entry.invariant);
      }, 300_000);
    } else {
      it(`corpus: ${entry.name} (${entry.invariant}) holds`, async () => {
        const result = await run(entry.schedule);
        expect(result.violations.map((v) => `${v.invariant}: ${v.detail}`)).toEqual([]);
      }, 300_000);
    }
  }
});
