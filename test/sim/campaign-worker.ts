// One process's share of a campaign: seeds [from, to), one JSON line each.
import { generate } from './schedule.js';
import { run } from './world.js';

const [from, to] = process.argv.slice(2).map(Number) as [number, number];
for (let seed = from; seed < to; seed++) {
  const schedule = generate(seed);
  const r = await run(schedule);
  process.stdout.write(`${JSON.stringify({ seed, options: schedule.options, steps: r.steps, simulatedMs: r.simulatedMs, violations: r.violations })}\n`);
}
