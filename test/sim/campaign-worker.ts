// One process's share of a campaign: seeds [from, to), one JSON line each.
import { generate } from './schedule.js';
import { run } from './world.js';

const [from, to] = process.argv.slice(2, 4).map(Number) as [number, number];
// --compare: each schedule again without the shortcuts (world.ts Shortcuts); the two end states are reported.
const compare = process.argv.includes('--compare');
for (let seed = from; seed < to; seed++) {
  const schedule = generate(seed);
  const r = await run(schedule);
  const without = compare ? await run(schedule, { shortcuts: { echoSkip: false, coalescer: false } }) : undefined;
  const differs = without ? JSON.stringify(without.final) !== JSON.stringify(r.final) : undefined;
  const invariants = (x: typeof r) => JSON.stringify([...new Set(x.violations.map((v) => v.invariant))].sort());
  const invariantsDiffer = without ? invariants(without) !== invariants(r) : undefined;
  process.stdout.write(`${JSON.stringify({ seed, options: schedule.options, steps: r.steps, simulatedMs: r.simulatedMs, violations: r.violations, ...(without ? { differs, invariantsDiffer, withoutViolations: without.violations.length, final: r.final, finalWithout: without.final } : {}) })}\n`);
}
