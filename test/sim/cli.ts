// npm run sim — the deterministic simulator's command line (test/sim/README.md).
//   npm run sim -- --seeds 300 [--from 1] [--procs 2]   a campaign; one summary line, a table of combinations
//   npm run sim -- --seed 4242 [--trace] [--shrink] [--without a,b]   one schedule: its trace; a failing one shrunk
//   npm run sim -- --schedule FILE [--trace] [--shrink]  a schedule as data (a corpus entry)
//   npm run sim -- --seeds N --compare [--without a,b]   each schedule also without the shortcuts (all: echoSkip, configCache, coalescer)
//   npm run sim -- --corpus                             replay the regression corpus
import { spawn } from 'node:child_process';
import { cpus } from 'node:os';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { readFileSync } from 'node:fs';
import { REFUSED, generate, type Options, type Schedule } from './schedule.js';
import { bundle } from './worker-bundle.js';
import type { Violation } from './checker.js';
import { SHORTCUTS, type Shortcuts } from '../../lib/reconcilers/shortcuts.js';
// The world (and the production code under it) is loaded only where this process runs schedules: a campaign's
// own processes load it themselves.
const world = () => import('./world.js');

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(`--${name}`);
const value = (name: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : undefined;
};
const out = (line: string) => process.stdout.write(`${line}\n`);
const describe = (v: Violation) => `${v.invariant} at ${(v.at / 1000).toFixed(3)} s: ${v.detail}`;

if (flag('corpus')) {
  const [{ loadCorpus }, { run }] = await Promise.all([import('./corpus.js'), world()]);
  let failed = 0;
  for (const entry of loadCorpus()) {
    const r = await run(entry.schedule);
    const found = r.violations.some((v) => v.invariant === entry.invariant);
    // A fixed defect must hold; an open one must still be found (the simulator's power).
    const ok = entry.open ? found : r.violations.length === 0;
    failed += ok ? 0 : 1;
    out(`${entry.name}: ${entry.open ? (found ? 'still found (open)' : 'NOT FOUND any more: fixed? mark it so') : ok ? 'holds' : `FAILS ${describe(r.violations[0]!)}`}`);
  }
  out(`corpus: ${failed} violations`);
  process.exit(failed ? 1 : 0);
}

const one = value('seed') ?? value('schedule');
if (one !== undefined) {
  // --schedule FILE: a schedule as plain data (a corpus entry's, or a shrunk one), replayed as it is.
  const file = value('schedule');
  const loaded = file ? (JSON.parse(readFileSync(file, 'utf8')) as Schedule | { schedule: Schedule }) : undefined;
  let schedule = loaded ? ('schedule' in loaded ? loaded.schedule : loaded) : generate(Number(one));
  const [{ run }, { shrink }] = await Promise.all([world(), import('./shrink.js')]);
  // --without a,b: this one schedule with those shortcuts switched off (what a --compare campaign found).
  const shortcuts = Object.fromEntries((value('without')?.split(',') ?? []).map((s) => [s, false])) as Partial<Shortcuts>;
  const first = await run(schedule, { trace: flag('trace'), shortcuts });
  if (flag('trace')) for (const line of first.trace) out(line);
  out(`seed ${one}: ${JSON.stringify(schedule.options)}`);
  out(`seed ${one}: ${first.steps} steps, ${(first.simulatedMs / 60000).toFixed(1)} simulated min, ${first.violations.length} violations`);
  for (const v of first.violations.slice(0, 20)) out(`  ${describe(v)}`);
  if (flag('shrink') && first.violations.length) {
    schedule = await shrink(schedule, first.violations[0]!.invariant, undefined, shortcuts);
    const again = await run(schedule, { trace: true, shortcuts });
    out(`shrunk to ${schedule.actions.length} actions and faults:`);
    for (const a of schedule.actions) out(`  ${JSON.stringify(a)}`);
    out(`schedule: ${JSON.stringify(schedule)}`);
    for (const v of again.violations.slice(0, 3)) out(`  ${describe(v)}`);
  }
  process.exit(first.violations.length ? 1 : 0);
}

// A campaign, spread over processes.
const seeds = Number(value('seeds') ?? 100);
const from = Number(value('from') ?? 1);
const procs = Math.max(1, Math.min(Number(value('procs') ?? cpus().length), seeds));
const started = Date.now();
// --compare switches off every shortcut, or those --without names (lib/reconcilers/shortcuts.ts).
const without = value('without')?.split(',') ?? [...SHORTCUTS];
const unknown = without.filter((s) => !SHORTCUTS.includes(s as keyof Shortcuts));
if (unknown.length) {
  out(`--without: no shortcut ${unknown.join(', ')} (there are ${SHORTCUTS.join(', ')})`);
  process.exit(2);
}
const worker = await bundle(fileURLToPath(new URL('./campaign-worker.ts', import.meta.url)));
interface Line { seed: number; options: Options; steps: number; simulatedMs: number; violations: Violation[]; differs?: boolean; invariantsDiffer?: boolean; withoutViolations?: number; firstWithout?: Violation; final?: unknown; finalWithout?: unknown }
const results: Line[] = [];
let failingSoFar = 0;
const step = Math.max(1, Math.floor(seeds / 20));
const began = Date.now();
await Promise.all(
  Array.from({ length: procs }, (_, p) => {
    const lo = from + Math.floor((seeds * p) / procs);
    const hi = from + Math.floor((seeds * (p + 1)) / procs);
    return new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [worker.file, String(lo), String(hi), ...(flag('compare') ? ['--compare', '--without', without.join(',')] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
      createInterface({ input: child.stdout! }).on('line', (l) => {
        const r = JSON.parse(l) as Line;
        results.push(r);
        if (r.violations.length) failingSoFar++;
        // A failing seed is named at once: a long campaign's replay can start before it ends.
        if (r.violations.length && !process.stderr.isTTY && !flag('quiet')) process.stderr.write(`seed ${r.seed} fails: ${describe(r.violations[0]!)}\n`);
        if (process.stderr.isTTY || flag('progress')) process.stderr.write(`\r${results.length}/${seeds} schedules, ${failingSoFar} failing`);
        // Into a log (not a terminal): a line every twentieth of the campaign.
        else if (!flag('quiet') && results.length % step === 0) process.stderr.write(`${results.length}/${seeds} schedules, ${failingSoFar} failing, ${Math.round((Date.now() - began) / 1000)} s\n`);
      });
      child.on('exit', (code) => (code === 0 ? resolve() : reject(new Error(`campaign worker exited ${code}`))));
    });
  }),
);
worker.remove();
if (process.stderr.isTTY || flag('progress')) process.stderr.write('\n');
results.sort((a, b) => a.seed - b.seed);
const failing = results.filter((r) => r.violations.length > 0);
const byInvariant = new Map<string, number>();
for (const r of failing) for (const inv of new Set(r.violations.map((v) => v.invariant))) byInvariant.set(inv, (byInvariant.get(inv) ?? 0) + 1);
// How often each combination the API accepts ran (and what failed in it).
const combo = (o: Options) => `${o.pool.padEnd(11)} ${o.policy.padEnd(7)} ${o.handoff.padEnd(15)} ${(o.scaler === 'swarm' ? 'swarm' : 'by hand').padEnd(7)} ${(o.acknowledges ? 'acks' : 'no acks').padEnd(7)}`;
const table = new Map<string, { runs: number; failing: number; instances: Set<number> }>();
for (const r of results) {
  const k = combo(r.options);
  const row = table.get(k) ?? { runs: 0, failing: 0, instances: new Set<number>() };
  row.runs++;
  row.instances.add(r.options.instances);
  if (r.violations.length) row.failing++;
  table.set(k, row);
}
if (!flag('quiet')) {
  out(`pool        policy  handoff         scaling acks    runs  failing  instances`);
  for (const [k, row] of [...table.entries()].sort()) out(`${k} ${String(row.runs).padStart(5)} ${String(row.failing).padStart(8)}  ${[...row.instances].sort().join(',')}`);
  for (const r of REFUSED) out(`refused by the API: ${r.rule}`);
  out('refused by Swarm (the checker expects it): policy None with no acks (AcknowledgementRequired: hot reload needs acknowledgement)');
  for (const r of failing.slice(0, 10)) out(`seed ${r.seed}: ${describe(r.violations[0]!)}`);
  if (failing.length > 10) out(`… and ${failing.length - 10} more failing seeds`);
  if (failing.length > 10) out(`every failing seed: ${failing.map((r) => `${r.seed} (${r.violations[0]!.invariant})`).join(', ')}`);
  if (byInvariant.size) out(`failing seeds by invariant: ${[...byInvariant.entries()].map(([k, n]) => `${k} ${n}`).join(', ')}`);
  if (failing.length) out(`replay one: npm run sim -- --seed ${failing[0]!.seed} --trace (add --shrink for the fewest actions that still fail)`);
}
if (flag('compare')) {
  // The shortcuts switched off: the same end state and the same invariants broken, schedule by schedule.
  const differing = results.filter((r) => r.differs);
  const clean = results.filter((r) => !r.invariantsDiffer && r.violations.length === 0).length;
  const other = results.filter((r) => r.invariantsDiffer);
  const violationsWithout = results.reduce((n, r) => n + (r.withoutViolations ?? 0), 0);
  out(`without ${without.join(', ')}: ${results.length - differing.length} of ${results.length} schedules reach the same end state (every job once, the same share sizes, the same status); ${results.length - other.length} break the same invariants (${clean} none either way); ${violationsWithout} violations without`);
  for (const r of differing.slice(0, 5)) out(`  seed ${r.seed} differs: ${JSON.stringify(r.final)} vs ${JSON.stringify(r.finalWithout)}`);
  for (const r of other.slice(0, 5)) out(`  seed ${r.seed} breaks other invariants: ${r.violations[0] ? describe(r.violations[0]) : 'none'}; without: ${r.firstWithout ? describe(r.firstWithout) : 'none'}`);
}
const hours = results.reduce((s, r) => s + r.simulatedMs, 0) / 3_600_000;
const steps = results.reduce((s, r) => s + r.steps, 0);
const violations = results.reduce((s, r) => s + r.violations.length, 0);
out(`sim: ${results.length} schedules, ${hours.toFixed(1)} simulated hours, ${steps} steps, ${violations} violations (${failing.length} failing schedules), ${((Date.now() - started) / 1000).toFixed(1)} s on ${procs} processes`);
process.exit(violations ? 1 : 0);
