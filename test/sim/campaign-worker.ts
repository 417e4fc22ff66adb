// One process's share of a campaign: seeds [from, to), one JSON line each.
import { generate } from './schedule.js';
import { run } from './world.js';
import { SHORTCUTS, type Shortcuts } from '../../lib/reconcilers/shortcuts.js';

const [from, to] = process.argv.slice(2, 4).map(Number) as [number, number];
// --compare: each schedule again with the shortcuts --without names switched off (lib/reconcilers/shortcuts.ts); the
// two end states are reported.
const compare = process.argv.includes('--compare');
const at = process.argv.indexOf('--without');
const without = at >= 0 ? (process.argv[at + 1]?.split(',') ?? []) : SHORTCUTS;
const off = Object.fromEntries(without.map((s) => [s, false])) as Partial<Shortcuts>;
for (let seed = from; seed < to; seed++) {
  const schedule = generate(seed);
  const r = await run(schedule);
  const without = compare ? await run(schedule, { shortcuts: off }) : undefined;
  // The end state as an outcome: every job's share sizes and status (a Deployment's pod names are drawn at random,
  // and a sticky assignment follows its history, so which worker holds which job may differ with the timing).
  const outcome = (x: typeof r) => JSON.stringify({
    jobs: Object.values(x.final.assignment).flat().sort(),
    sizes: Object.values(x.final.assignment).map((l) => l.length).sort((a, b) => a - b),
    status: x.final.status,
  });
  const differs = without ? outcome(without) !== outcome(r) : undefined;
  const invariants = (x: typeof r) => JSON.stringify([...new Set(x.violations.map((v) => v.invariant))].sort());
  const invariantsDiffer = without ? invariants(without) !== invariants(r) : undefined;
  process.stdout.write(`${JSON.stringify({ seed, options: schedule.options, steps: r.steps, simulatedMs: r.simulatedMs, violations: r.violations, ...(without ? { differs, invariantsDiffer, withoutViolations: without.violations.length, firstWithout: without.violations[0], final: r.final, finalWithout: without.final } : {}) })}\n`);
}
