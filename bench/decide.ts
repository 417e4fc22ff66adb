// npm run bench:decide — the CPU of one no-op assign event's decisions (the
// ConfigMap's, then status) over a converged Swarm of 5,000 jobs whose workers
// acknowledge their shares, at 10 and 1,000 workers, with the config cache (the
// ConfigMap parsed once per version, lib/reconcilers/shortcuts.ts) on and off.
// In process, no API: what bench:reconcile cannot show (its KWOK workers write
// no Leases, so it judges none). Results: bench/RESULTS.md.
import { cpus, totalmem } from 'node:os';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { decideConfigMap } from '../lib/decisions/configmap.js';
import { computeStatus } from '../lib/decisions/status.js';
import { readRestarts } from '../lib/decisions/workspace.js';
import { cachedConfigReader } from '../lib/reconcilers/shortcuts.js';
import { repoRoot } from '../test/controlplane/cluster.js';
import { swarmOf } from '../test/support/fixtures.js';
import { acknowledgingLabels, configOf, converge, runs, sts, validSwarm, workerPod, written } from '../test/support/views.js';
import { withSection } from './results-file.js';

const JOBS = 5_000;
const WORKERS = [10, 1_000];
const BATCHES = 7;
const PER_BATCH = 10;
const progress = (line: string) => process.stderr.write(`[bench:decide] ${line}\n`);
const VARIANTS = [
  ['config cache on', true],
  ['no config cache', false],
] as const;

/** A converged Swarm of `workers` acknowledging pods: one no-op event's decisions, as lib/reconcilers/assign.ts makes them. */
function world(workers: number) {
  const jobs = Array.from({ length: JOBS }, (_, i) => `job-${i}`);
  const swarm = validSwarm(swarmOf({ jobs, replicas: workers }));
  const statefulSet = sts(workers);
  const pods = Array.from({ length: workers }, (_, i) => workerPod(i, { labels: { ...acknowledgingLabels } }));
  const now = '2026-11-22T00:00:00Z';
  const configMap = written(decideConfigMap({ swarm, statefulSet, configMap: undefined, pods, leases: [], now }));
  const leases = pods.map((p) => runs(p, configOf(configMap)));
  return (configCache: boolean) => {
    const decision = converge(decideConfigMap({ swarm, statefulSet, configMap, pods, leases, now }, cachedConfigReader(configMap, configCache)));
    if (decision.write !== 'none') throw new Error(`not a no-op: ${decision.write}`);
    computeStatus({ swarm, now, statefulSet, config: decision.config, workers: decision.workers, workspace: readRestarts(decision.configMap.annotations), pods, leases });
  };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const t0 = Date.now();
const rows: string[] = [];
for (const workers of WORKERS) {
  const event = world(workers);
  const cells: string[] = [];
  for (const [label, configCache] of VARIANTS) {
    for (let i = 0; i < 3; i++) event(configCache); // warm: the JIT, and the cache filled
    const batches: number[] = [];
    for (let b = 0; b < BATCHES; b++) {
      const start = process.cpuUsage();
      for (let i = 0; i < PER_BATCH; i++) event(configCache);
      const used = process.cpuUsage(start);
      batches.push((used.user + used.system) / 1000 / PER_BATCH);
    }
    cells.push(median(batches).toFixed(1));
    progress(`${workers} workers, ${label}: ${median(batches).toFixed(1)} ms per event`);
  }
  rows.push(`| ${workers.toLocaleString('en-US')} | ${cells.join(' | ')} |`);
}

const seconds = ((Date.now() - t0) / 1000).toFixed(0);
const table = [`| workers | ${VARIANTS.map(([label]) => label).join(' | ')} |`, `| --- | ${VARIANTS.map(() => '---').join(' | ')} |`, ...rows];
const body = [
  '## One no-op event\'s decisions, with the config cache on and off (bench:decide)',
  '',
  `\`npm run bench:decide\`; ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, shared with other work; ${seconds} s. CPU ms (process user+system, the median of ${BATCHES} batches of ${PER_BATCH} events, after 3 to warm) of what one no-op assign event decides — the ConfigMap (config.yml read, the assignment, staging, restarts) and status (coverage judged from each worker's Lease) — over a converged Swarm of ${JOBS.toLocaleString('en-US')} jobs whose workers all acknowledge their shares; no API requests (those are bench:reconcile's).`,
  '',
  ...table,
].join('\n');
const resultsPath = join(repoRoot, 'bench', 'RESULTS.md');
writeFileSync(resultsPath, withSection(readFileSync(resultsPath, 'utf8'), 'bench:decide', body));
process.stdout.write(`${table.join('\n')}\n`);
progress(`done in ${seconds} s; bench/RESULTS.md updated`);
