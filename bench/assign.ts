// npm run bench:assign — the assignment engine against its peers.
// A benchmark, not a test: it prints and writes numbers, it asserts only that
// its own bookkeeping agrees with the library (lower bound, jump hash).
//
//   npm run bench:assign               full matrix → bench/RESULTS.md + SVGs
//   npm run bench:assign -- --quick    J ≤ 10k only, to stdout
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { assign, lowerBound, type Assignment } from '../lib/assignment/index.js';
import { hash32 } from '../lib/assignment/hash.js';
import { fmix32 } from './peers/mix.js';
import { boundedLoads } from './peers/bounded-loads.js';
import { chunking, chunkingCoverage } from './peers/chunking.js';
import { jump, jumpHash } from './peers/jump.js';
import { rendezvous } from './peers/rendezvous.js';
import { roundRobin } from './peers/round-robin.js';
import type { Algorithm, JobSet, PreviousLayout } from './peers/types.js';
import { lineChart } from './svg.js';
import { allSections } from './results-file.js';

const quick = process.argv.includes('--quick');
const STS = 'w';
const JOB_COUNTS = quick ? [27, 10_000] : [27, 10_000, 100_000, 1_000_000];
const REPLICAS = [2, 3, 5, 10, 11, 50, 51, 100, 101, 500, 1000];
const REPLICAS_AT_1M = [2, 10, 11, 100, 101, 1000];
/** Rendezvous is O(J·n); beyond this many (job, worker) scores a row is skipped. */
const RENDEZVOUS_LIMIT = 2e7;

const engine: Algorithm & { index?: Map<string, number>; indexFor?: readonly string[] } = {
  name: 'swarm (this engine)',
  layout(jobs, replicas, previous) {
    const prior = previous ? toAssignment(previous) : undefined;
    const { assignment } = assign({ statefulSetName: STS, replicas, jobs: jobs.names, previous: prior });
    return ownersFrom(assignment, jobs.names);
  },
};
const ALGORITHMS: Algorithm[] = [engine, chunking, roundRobin, jump, rendezvous, boundedLoads];

function toAssignment(layout: PreviousLayout): Assignment {
  const lists: string[][] = Array.from({ length: layout.replicas }, () => []);
  layout.owner.forEach((w, i) => lists[w]!.push(layout.jobs.names[i]!));
  return Object.fromEntries(lists.map((jobs, w) => [`${STS}-${w}`, jobs]));
}

const indexCache = new WeakMap<readonly string[], Map<string, number>>();
function ownersFrom(assignment: Assignment, names: readonly string[]): Int32Array {
  let index = indexCache.get(names);
  if (!index) {
    index = new Map(names.map((n, i) => [n, i]));
    indexCache.set(names, index);
  }
  const owner = new Int32Array(names.length).fill(-1);
  for (const [worker, jobs] of Object.entries(assignment)) {
    const w = Number(worker.slice(STS.length + 1));
    for (const job of jobs) owner[index.get(job)!] = w;
  }
  return owner;
}

function jobSet(names: readonly string[]): JobSet {
  const hashA = new Uint32Array(names.length);
  const hashB = new Uint32Array(names.length);
  names.forEach((n, i) => {
    hashA[i] = hash32(n);
    hashB[i] = fmix32(hashA[i]! ^ hash32(`${n}\u0000salt`));
  });
  return { names, hashA, hashB };
}

/** A change of job set: the new set and, per new job, the index of the same job before (-1 if new). */
interface Change {
  readonly label: string;
  readonly jobs: JobSet;
  readonly replicas: number;
  readonly before: Int32Array;
}

function changesFor(base: JobSet, replicas: number): Change[] {
  const identity = Int32Array.from(base.names, (_, i) => i);
  const delta = Math.max(1, Math.round(base.names.length / 100));
  const added = base.names.concat(Array.from({ length: delta }, (_, k) => `added-${k}`));
  // Remove every (J/delta)-th job, spread over the list as real churn would be.
  const step = base.names.length / delta;
  const removedAt = new Set(Array.from({ length: delta }, (_, k) => Math.floor(k * step)));
  const keptIdx = [...identity].filter((i) => !removedAt.has(i));
  const changes: Change[] = [
    { label: 'n+1', jobs: base, replicas: replicas + 1, before: identity },
    { label: '+1% jobs', jobs: jobSetCached(added), replicas, before: Int32Array.from(added, (_, i) => (i < base.names.length ? i : -1)) },
    { label: '-1% jobs', jobs: jobSetCached(keptIdx.map((i) => base.names[i]!)), replicas, before: Int32Array.from(keptIdx) },
  ];
  if (replicas > 1) changes.splice(1, 0, { label: 'n-1', jobs: base, replicas: replicas - 1, before: identity });
  return changes;
}
const jobSetMemo = new Map<string, JobSet>();
function jobSetCached(names: string[]): JobSet {
  const key = `${names.length}:${names[0]}:${names[names.length - 1]}`;
  let set = jobSetMemo.get(key);
  if (!set) jobSetMemo.set(key, (set = jobSet(names)));
  return set;
}

/** Surviving jobs that changed owner, and the closed-form lower bound (see lib/assignment/lower-bound.ts). */
function movement(prevOwner: Int32Array, change: Change, nextOwner: Int32Array): { moved: number; bound: number } {
  const n = change.replicas;
  const held = new Int32Array(n);
  let orphans = 0;
  let moved = 0;
  for (let i = 0; i < change.before.length; i++) {
    const p = change.before[i]!;
    if (p < 0) continue;
    const was = prevOwner[p]!;
    // A job nobody held (the original chunking drops some) is new, not moved.
    if (was < 0) continue;
    if (was < n && was < n) held[was]!++;
    else orphans++;
    if (nextOwner[i] !== was) moved++;
  }
  const total = change.before.length;
  const q = Math.floor(total / n);
  const r = total % n;
  let over = 0;
  let aboveFloor = 0;
  for (const h of held) {
    over += Math.max(0, h - q);
    if (h > q) aboveFloor++;
  }
  return { moved, bound: orphans + over - Math.min(r, aboveFloor) };
}

function spreadOf(owner: Int32Array, replicas: number): { spread: number; maxOverAvg: number; unassigned: number } {
  const count = new Int32Array(replicas);
  let unassigned = 0;
  for (const w of owner) {
    if (w < 0) unassigned++;
    else count[w]!++;
  }
  let max = 0;
  let min = Infinity;
  for (const c of count) {
    max = Math.max(max, c);
    min = Math.min(min, c);
  }
  return { spread: max - min, maxOverAvg: max / (owner.length / replicas), unassigned };
}

/** The original's slices overlap, so count what each worker really holds. */
function chunkingSpread(jobCount: number, replicas: number): { spread: number; maxOverAvg: number; unassigned: number } {
  const { holders } = chunkingCoverage(jobCount, replicas);
  const partSize = Math.floor(jobCount / replicas);
  const sizes = Array.from({ length: replicas }, (_, i) => {
    const size = partSize + (i < jobCount % replicas ? 1 : 0);
    return Math.max(0, Math.min((i + 1) * size, jobCount) - i * size);
  });
  const max = Math.max(...sizes);
  return { spread: max - Math.min(...sizes), maxOverAvg: max / (jobCount / replicas), unassigned: holders.filter((h) => h === 0).length };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

interface Row {
  algorithm: string;
  jobs: number;
  replicas: number;
  spread: number;
  maxOverAvg: number;
  unassigned: number;
  spreadAfter: number;
  ratios: Record<string, { moved: number; bound: number }>;
  ms: number;
  /** Process CPU time (user + system): robust to other processes on a shared machine, but includes GC threads. */
  cpuMs: number;
}

function selfCheck(): void {
  // Jump hash against a BigInt transcription of the paper's loop.
  const reference = (key: bigint, buckets: number): number => {
    let b = -1n;
    let j = 0n;
    while (j < BigInt(buckets)) {
      b = j;
      key = (key * 2862933555777941757n + 1n) & 0xffffffffffffffffn;
      j = BigInt(Math.floor(Number(b + 1n) * (Number(1n << 31n) / Number((key >> 33n) + 1n))));
    }
    return Number(b);
  };
  for (let k = 0; k < 2000; k++) {
    const hi = fmix32(k * 7 + 1);
    const lo = fmix32(k * 13 + 5);
    const n = 1 + (k % 997);
    const expected = reference((BigInt(hi) << 32n) | BigInt(lo), n);
    if (jumpHash(hi, lo, n) !== expected) throw new Error(`jump hash disagrees with the reference at key ${k}`);
  }
}

function seedReport(): string[] {
  const streams = readFileSync(new URL('../test/fixtures/seed-streams.txt', import.meta.url), 'utf8').split('\n').filter(Boolean);
  const lines = ['| replicas | streams on two workers | streams on none |', '|---:|---:|---:|'];
  for (let n = 2; n <= 6; n++) {
    const { holders } = chunkingCoverage(streams.length, n);
    lines.push(`| ${n} | ${holders.filter((h) => h > 1).length} | ${holders.filter((h) => h === 0).length} |`);
  }
  return lines;
}

function run(): Row[] {
  const rows: Row[] = [];
  for (const J of JOB_COUNTS) {
    const names = J === 27 ? readFileSync(new URL('../test/fixtures/seed-streams.txt', import.meta.url), 'utf8').split('\n').filter(Boolean) : Array.from({ length: J }, (_, i) => `stream-${i}`);
    const base = jobSetCached(names);
    for (const n of J === 1_000_000 ? REPLICAS_AT_1M : REPLICAS) {
      for (const algorithm of ALGORITHMS) {
        if (algorithm === rendezvous && J * (n + 1) > RENDEZVOUS_LIMIT) continue;
        const runs = J >= 1_000_000 ? 5 : J >= 100_000 ? 5 : 11;
        const times: number[] = [];
        const cpuTimes: number[] = [];
        let owner: Int32Array = new Int32Array(0);
        for (let k = 0; k < runs; k++) {
          // Start each timed run from a collected heap (npm script passes --expose-gc),
          // so one algorithm's garbage is not billed to the next.
          (globalThis as { gc?: () => void }).gc?.();
          const c0 = process.cpuUsage();
          const t0 = performance.now();
          owner = algorithm.layout(base, n);
          times.push(performance.now() - t0);
          const c1 = process.cpuUsage(c0);
          cpuTimes.push((c1.user + c1.system) / 1000);
        }
        const { spread, maxOverAvg, unassigned } = algorithm === chunking ? chunkingSpread(J, n) : spreadOf(owner, n);
        const previous: PreviousLayout = { jobs: base, owner, replicas: n };
        const ratios: Row['ratios'] = {};
        let spreadAfter = 0;
        for (const change of changesFor(base, n)) {
          const next = algorithm.layout(change.jobs, change.replicas, previous);
          ratios[change.label] = movement(owner, change, next);
          spreadAfter = Math.max(spreadAfter, spreadOf(next, change.replicas).spread);
          if (algorithm === engine && J <= 10_000) {
            // The bench's closed form must agree with the library's lower bound.
            const lb = lowerBound({ statefulSetName: STS, replicas: change.replicas, jobs: change.jobs.names, previous: toAssignment(previous) });
            if (lb?.moves !== ratios[change.label]!.bound) throw new Error(`lower bound mismatch at J=${J} n=${n} ${change.label}`);
          }
        }
        rows.push({ algorithm: algorithm.name, jobs: J, replicas: n, spread, maxOverAvg, unassigned, spreadAfter, ratios, ms: median(times), cpuMs: median(cpuTimes) });
        const r = ratios['n+1']!;
        process.stderr.write(`J=${J} n=${n} ${algorithm.name}: spread ${spread}, n+1 moved ${r.moved}/${r.bound}, ${median(times).toFixed(1)} ms\n`);
      }
    }
  }
  return rows;
}

function ratioText(r: { moved: number; bound: number } | undefined): string {
  if (!r) return '–';
  if (r.bound === 0) return r.moved === 0 ? '– (0/0)' : `∞ (${r.moved}/0)`;
  return `${(r.moved / r.bound).toFixed(2)} (${r.moved}/${r.bound})`;
}

function table(rows: Row[], J: number): string[] {
  const lines = [
    `### J = ${J.toLocaleString('en')} jobs`,
    '',
    '| n | algorithm | max−min | max/avg | unassigned | max−min after change | moved/LB n→n+1 | n→n−1 | +1% jobs | −1% jobs | wall ms (median) | CPU ms (median) |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
  ];
  for (const row of rows.filter((r) => r.jobs === J)) {
    lines.push(
      `| ${row.replicas} | ${row.algorithm} | ${row.spread} | ${row.maxOverAvg.toFixed(3)} | ${row.unassigned} | ${row.spreadAfter} | ${ratioText(row.ratios['n+1'])} | ${ratioText(row.ratios['n-1'])} | ${ratioText(row.ratios['+1% jobs'])} | ${ratioText(row.ratios['-1% jobs'])} | ${row.ms < 10 ? row.ms.toFixed(2) : row.ms.toFixed(0)} | ${row.cpuMs < 10 ? row.cpuMs.toFixed(2) : row.cpuMs.toFixed(0)} |`,
    );
  }
  return lines;
}

function charts(rows: Row[]): string[] {
  const written: string[] = [];
  for (const J of JOB_COUNTS.filter((j) => j >= 10_000)) {
    const series = (value: (r: Row) => number | undefined) =>
      ALGORITHMS.map((a) => ({
        name: a.name,
        points: rows
          .filter((r) => r.algorithm === a.name && r.jobs === J)
          .map((r) => ({ x: r.replicas, y: value(r) }))
          .filter((p): p is { x: number; y: number } => p.y !== undefined && Number.isFinite(p.y)),
      }));
    const file = `assign-${J >= 1_000_000 ? `${J / 1_000_000}M` : `${J / 1000}k`}.svg`;
    const svg = lineChart({
      title: `${J.toLocaleString('en')} jobs`,
      panels: [
        { label: 'moved / lower bound, n → n+1', logY: true, series: series((r) => (r.ratios['n+1']!.bound > 0 ? r.ratios['n+1']!.moved / r.ratios['n+1']!.bound : undefined)) },
        { label: 'max − min jobs per worker', logY: true, series: series((r) => r.spread + 1), yOffset: 1 },
      ],
    });
    writeFileSync(new URL(file, import.meta.url), svg);
    written.push(file);
  }
  return written;
}

/** Weighted jobs: only this engine takes weights. LB here is the weighted relaxation (not exact). */
function weightedReport(): string[] {
  const lines = [
    '| J | weights | n | max−min load | largest weight | moved n→n+1 | LB (relaxed) | moved n→n−1 | LB (relaxed) | within 1.05·LB+1 |',
    '|---:|---|---:|---:|---:|---:|---:|---:|---:|---|',
  ];
  let seed = 12345;
  const random = () => ((seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  for (const J of [1000, 10_000]) {
    for (const wmax of [10, 1000]) {
      const jobs = Array.from({ length: J }, (_, i) => ({ name: `stream-${i}`, weight: 1 + Math.floor(random() * wmax) }));
      const weightOf = new Map(jobs.map((j) => [j.name, j.weight]));
      for (const n of [3, 10, 50, 100]) {
        const first = assign({ statefulSetName: STS, replicas: n, jobs }).assignment;
        const loads = Object.values(first).map((list) => list.reduce((s, name) => s + weightOf.get(name)!, 0));
        const cells: string[] = [];
        let within = true;
        for (const m of [n + 1, n - 1]) {
          const next = assign({ statefulSetName: STS, replicas: m, jobs, previous: first }).assignment;
          const moved = diffMoved(first, next);
          const bound = lowerBound({ statefulSetName: STS, replicas: m, jobs, previous: first })!.moves;
          within &&= moved <= 1.05 * bound + 1;
          cells.push(String(moved), String(bound));
        }
        const spread = Math.max(...loads) - Math.min(...loads);
        lines.push(`| ${J} | 1..${wmax} uniform | ${n} | ${spread} | ${Math.max(...jobs.map((j) => j.weight))} | ${cells.join(' | ')} | ${within ? 'yes' : 'no'} |`);
      }
    }
  }
  return lines;
}

function diffMoved(previous: Assignment, next: Assignment): number {
  const before = new Map<string, string>();
  for (const [w, jobs] of Object.entries(previous)) for (const j of jobs) before.set(j, w);
  let moved = 0;
  for (const [w, jobs] of Object.entries(next)) for (const j of jobs) if (before.has(j) && before.get(j) !== w) moved++;
  return moved;
}

/** Facts computed from this run's rows, so the prose cannot drift from the table. */
function summary(rows: Row[]): string[] {
  const ours = rows.filter((r) => r.algorithm === engine.name);
  let worst = 0;
  for (const r of ours) for (const m of Object.values(r.ratios)) if (m.bound > 0) worst = Math.max(worst, m.moved / m.bound);
  const spread = Math.max(...ours.map((r) => Math.max(r.spread, r.spreadAfter)));
  const row = (J: number, n: number) => ours.find((r) => r.jobs === J && r.replicas === n);
  const fmt = (r: Row | undefined) => (r ? `${r.ms.toFixed(r.ms < 10 ? 2 : 0)} ms wall, ${r.cpuMs.toFixed(r.cpuMs < 10 ? 2 : 0)} ms CPU` : 'n/a');
  const t1m = row(1_000_000, 1000);
  const t10k = row(10_000, 100);
  const lines = [
    `- This engine, over all ${ours.length} (J, n) rows and all four changes: worst moved/LB = ${worst.toFixed(3)}, worst max − min (before or after a change) = ${spread}.`,
    `- Time, fresh layout, median: 10k jobs over 100 replicas ${fmt(t10k)} (target < 10 ms)` + (t1m === undefined ? '.' : `; 1M jobs over 1000 replicas ${fmt(t1m)} (target < 1000 ms). Wall time swings with the machine's other load; CPU time is the steadier figure.`),
  ];
  for (const peer of ALGORITHMS.filter((a) => a !== engine)) {
    const theirs = rows.filter((r) => r.algorithm === peer.name && r.jobs >= 10_000);
    if (theirs.length === 0) continue;
    const maxSpread = Math.max(...theirs.map((r) => r.spread));
    const maxRatio = Math.max(...theirs.map((r) => (r.ratios['n+1']!.bound > 0 ? r.ratios['n+1']!.moved / r.ratios['n+1']!.bound : 0)));
    lines.push(`- ${peer.name} (J ≥ 10k): max − min up to ${maxSpread}, moved/LB for n→n+1 up to ${maxRatio.toFixed(2)}.`);
  }
  lines.push(
    '- Reading moved/LB for peers: LB is measured from each algorithm’s own layout and counts the moves needed to reach *exact* balance. Hash peers score below 1 because they never reach balance (see max − min); chunking and round-robin are balanced but reshuffle.',
    '- Rendezvous is O(J·n): rows with J·(n+1) > 2·10^7 are skipped. n sampled: 2, 3, 5, 10, 11, 50, 51, 100, 101, 500, 1000 (at 1M jobs: 2, 10, 11, 100, 101, 1000).',
    '- Note: a ConfigMap holds at most 1 MiB, so a real deployment stops at tens of thousands of short job names; the larger rows measure the algorithm, not a deployable config.',
  );
  return lines;
}

selfCheck();
const started = Date.now();
const rows = run();
const seconds = ((Date.now() - started) / 1000).toFixed(0);
const cpu = readFileSync('/proc/cpuinfo', 'utf8').match(/model name\s*:\s*(.*)/)?.[1] ?? 'unknown';
const out = [
  '# Assignment benchmark',
  '',
  `Command: \`npm run bench:assign${quick ? ' -- --quick' : ''}\` (bench/assign.ts via tsx, one thread). Generated ${new Date().toISOString()}, ${seconds} s.`,
  `Machine: ${cpus().length} CPUs (nproc), ${cpu}, Node ${process.version}. Shared with other builds while it ran: times are indicative, not a lab measurement.`,
  '',
  '## Summary',
  '',
  ...summary(rows),
  '',
  '## The original chunking on the 27 seed streams',
  '',
  'Its slices start at i·size_i instead of at the sum of earlier sizes, so some streams land on two workers and as many on none:',
  '',
  ...seedReport(),
  '',
  '## Matrix',
  '',
  'moved = surviving jobs whose owner changed; LB = the fewest such moves that reach an exactly balanced result (max − min ≤ 1) from the algorithm’s own previous layout (closed form, lib/assignment/lower-bound.ts). A stateless peer may move fewer than LB because it does not reach balance. Time: one fresh layout, median.',
  '',
];
for (const J of JOB_COUNTS) out.push(...table(rows, J), '');
out.push('## Weighted jobs (this engine only)', '', ...weightedReport(), '');
const svgs = quick ? [] : charts(rows);
out.push('## Charts', '', ...svgs.map((f) => `![${f}](${f})`), '');
if (quick) process.stdout.write(out.join('\n'));
else {
  // Other benchmarks' sections (bench:coverage, bench:coverage:original, bench:reconcile) are kept as they were.
  const file = new URL('RESULTS.md', import.meta.url);
  const kept = existsSync(file) ? allSections(readFileSync(file, 'utf8')) : [];
  writeFileSync(file, out.join('\n') + kept.map((section) => `\n${section}\n`).join(''));
  process.stderr.write(`wrote bench/RESULTS.md and ${svgs.join(', ')}\n`);
}
