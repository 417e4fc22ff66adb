// npm run bench:coverage — what today's design does to the jobs while the
// worker pool is resized, measured from the workers' own reports.
//
// On the local cluster with a real node: the sample worker pool (the reference
// worker as real pods mounting the real ConfigMap), a Swarm over the 27 seed
// streams, and `kubectl scale sts` 2→3→4→1→3, once with the kubelet's default
// sync period and once with `syncFrequency: 10s`. Per step, from the scale
// command until the workers' reports show every job run exactly once:
// uncovered and duplicate job-seconds (test/support/coverage-recorder), the time
// the Swarm's status said it converged, the time the workers did, and the pods
// restarted. A benchmark, not a test: it asserts nothing about the numbers.
//
//   npm run bench:coverage                 both sync periods → bench/RESULTS.md
//   npm run bench:coverage -- --sync 10s   one sync period, to stdout only
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Swarm } from '../lib/api/types.js';
import { defaultWorkDir, startCluster, type Cluster } from '../test/controlplane/cluster.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from '../test/harness/local-knative.js';
import { exactlyOnceAt, recordWorkerPool, sampleSwarmYaml, workerPoolYaml } from '../test/harness/worker-pool.js';
import { ensureWorkerImage } from '../test/harness/worker-image.js';
import type { WorkerPodsRecorder } from '../test/support/coverage-recorder/recorder.js';
import { seedStreams } from '../test/support/fixtures.js';
import { eventually } from '../test/support/timeline.js';
import { COVERAGE_SECTION } from './coverage-section.js';
import { withSection } from './results-file.js';

const SCALES = [3, 4, 1, 3];
const START_REPLICAS = 2;
const NS = 'bench-coverage';
/** Longest a step may take before it is recorded as not converged (the default sync period is 1 min, plus jitter). */
const STEP_TIMEOUT_MS = 240_000;

const syncArg = process.argv.indexOf('--sync');
const syncs: Array<string | undefined> = syncArg >= 0 ? [process.argv[syncArg + 1] === 'default' ? undefined : process.argv[syncArg + 1]] : [undefined, '10s'];
/** Sync period label → the worker image that ran. */
const images = new Map<string, string>();
const progress = (line: string) => process.stderr.write(`[bench:coverage] ${line}\n`);

interface StepResult {
  readonly step: string;
  readonly replicas: number;
  readonly version: number | undefined;
  /** Seconds from the command to the Swarm's status Running at the new version with every pod Ready. */
  readonly statusConvergedS: number | undefined;
  /** Seconds from the command to the workers' own reports showing every job exactly once. */
  readonly workersConvergedS: number | undefined;
  readonly uncoveredJobSeconds: number;
  readonly jobsUncovered: number;
  readonly longestGapS: number;
  readonly duplicateJobSeconds: number;
  readonly jobsDuplicated: number;
  /** Pods deleted and replaced during the step (same name, new uid): the restart function's restarts. */
  readonly podsRestarted: number;
  /** Pods deleted by the scale-down itself (name beyond the new replica count). */
  readonly podsRemoved: number;
  readonly anomalies: number;
  readonly misses: number;
}

async function run(syncFrequency: string | undefined): Promise<StepResult[]> {
  const label = syncFrequency ?? 'default';
  progress(`sync ${label}: starting the cluster (real node)`);
  const cluster: Cluster = await startCluster({
    workDir: join(defaultWorkDir, `bench-coverage-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
    onProgress: (line) => progress(`  ${line}`),
    ...(syncFrequency ? { syncFrequency } : {}),
  });
  let local: LocalKnative | undefined;
  let recorder: WorkerPodsRecorder | undefined;
  try {
    const kubeconfig = cluster.kubeconfigPath;
    const image = await ensureWorkerImage(cluster, (line: string) => progress(`  ${line}`));
    images.set(label, image);
    await installSwarm(kubeconfig);
    await enableNamespace(kubeconfig, NS);
    recorder = await recordWorkerPool(kubeconfig, NS);
    // The function hosts' per-event logs would bury the progress lines.
    process.env.LOG_LEVEL ??= 'warn';
    local = await startLocalKnative({ adminKubeconfig: kubeconfig, namespace: NS, workDir: join(cluster.workDir, 'knative') });
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const custom = kc.makeApiClient(CustomObjectsApi);
    const swarmStatus = async () =>
      (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS, name: 'swarm-worker' })) as Swarm;

    const results: StepResult[] = [];
    let version = 0;
    const step = async (name: string, replicas: number, act: () => Promise<void>): Promise<void> => {
      const r = recorder!;
      const deletedBefore = new Set([...r.pods.values()].filter((p) => p.deletedAt !== undefined).map((p) => p.uid));
      const from = Date.now();
      progress(`sync ${label}: ${name}`);
      await act();
      // The step is over when the Swarm's status and the workers' own reports both say so.
      let statusAt: number | undefined;
      let statusVersion: number | undefined;
      const done = await eventually(
        `the Swarm's status and the workers converged at ${replicas} replicas`,
        async () => {
          if (statusAt === undefined) {
            const s = await swarmStatus();
            const st = s.status;
            if (st?.phase === 'Running' && (st.version ?? 0) > version && st.readyReplicas === replicas && st.observedGeneration === s.metadata.generation) {
              statusAt = Date.now();
              statusVersion = st.version;
            }
          }
          const workers = exactlyOnceAt(r, seedStreams, replicas);
          return statusAt !== undefined && workers ? workers.at : undefined;
        },
        STEP_TIMEOUT_MS,
        250,
      ).catch(() => undefined);
      const to = done ?? Date.now();
      // The workers converged when the state they ended the step in began.
      const workersAt = done === undefined ? undefined : r.lastChangeIn({ from, to });
      const status = statusAt === undefined ? undefined : { at: statusAt, version: statusVersion };
      const workers = workersAt === undefined ? undefined : { at: workersAt };
      await r.settle();
      const report = r.report(seedStreams, { from, to });
      const deleted = [...r.pods.values()].filter((p) => p.deletedAt !== undefined && !deletedBefore.has(p.uid));
      const ordinal = (name: string) => Number(name.slice(name.lastIndexOf('-') + 1));
      const result: StepResult = {
        step: name,
        replicas,
        version: status?.version,
        statusConvergedS: status ? (status.at - from) / 1000 : undefined,
        workersConvergedS: workers ? (workers.at - from) / 1000 : undefined,
        uncoveredJobSeconds: report.totals.uncoveredSeconds,
        jobsUncovered: report.totals.jobsUncovered,
        longestGapS: Math.max(0, ...report.gaps.map((g) => (g.to - g.from) / 1000)),
        duplicateJobSeconds: report.totals.duplicateSeconds,
        jobsDuplicated: report.totals.jobsDuplicated,
        podsRestarted: deleted.filter((p) => ordinal(p.name) < replicas).length,
        podsRemoved: deleted.filter((p) => ordinal(p.name) >= replicas).length,
        anomalies: report.anomalies.length,
        misses: r.misses.length,
      };
      if (status?.version !== undefined) version = status.version;
      results.push(result);
      progress(
        `sync ${label}: ${name}: uncovered ${result.uncoveredJobSeconds} job-s (${result.jobsUncovered} jobs), duplicate ${result.duplicateJobSeconds} job-s, ` +
          `status converged ${fmt(result.statusConvergedS)} s, workers ${fmt(result.workersConvergedS)} s, restarted ${result.podsRestarted}, removed ${result.podsRemoved}`,
      );
    };

    await step(`start at ${START_REPLICAS}`, START_REPLICAS, async () => {
      await kubectl(kubeconfig, ['apply', '-f', '-'], workerPoolYaml(NS, START_REPLICAS, image));
      await kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(NS, seedStreams));
    });
    let replicas = START_REPLICAS;
    for (const next of SCALES) {
      await step(`${replicas}→${next}`, next, async () => {
        await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/swarm-worker', '--replicas', String(next)]);
      });
      replicas = next;
    }
    return results;
  } finally {
    recorder?.stop();
    await local?.stop();
    progress(`sync ${label}: stopping the cluster`);
    await cluster.stop();
  }
}


const fmt = (s: number | undefined) => (s === undefined ? '—' : s.toFixed(1));

function table(label: string, results: readonly StepResult[]): string[] {
  const total = (key: 'uncoveredJobSeconds' | 'duplicateJobSeconds') => results.slice(1).reduce((sum, r) => sum + r[key], 0);
  return [
    `### kubelet sync period: ${label === 'default' ? 'default (1m)' : label}`,
    '',
    `Worker image: \`${images.get(label) ?? '?'}\`.`,
    '',
    '| step | config version | status converged (s) | workers converged (s) | uncovered job-s | jobs uncovered | longest gap (s) | duplicate job-s | jobs duplicated | pods restarted | pods removed |',
    '|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|',
    ...results.map(
      (r) =>
        `| ${r.step} | ${r.version ?? '—'} | ${fmt(r.statusConvergedS)} | ${fmt(r.workersConvergedS)} | ${r.uncoveredJobSeconds.toFixed(1)} | ${r.jobsUncovered} | ${r.longestGapS.toFixed(1)} | ${r.duplicateJobSeconds.toFixed(1)} | ${r.jobsDuplicated} | ${r.podsRestarted} | ${r.podsRemoved} |`,
    ),
    '',
    `Scaling steps (after the start): ${total('uncoveredJobSeconds').toFixed(1)} uncovered job-seconds, ${total('duplicateJobSeconds').toFixed(1)} duplicate job-seconds.` +
      (results.some((r) => r.anomalies || r.misses) ? ` Recorder anomalies/misses: ${results.map((r) => `${r.anomalies}/${r.misses}`).join(', ')}.` : ''),
    '',
  ];
}

const started = Date.now();
const sections: string[] = [];
for (const sync of syncs) sections.push(...table(sync ?? 'default', await run(sync)));
const header = [
  '## Coverage benchmark (baseline: today\'s design, before the handoff issue)',
  '',
  `Command: \`npm run bench:coverage\` (bench/coverage.ts via tsx). Generated ${new Date().toISOString()}, ${Math.round((Date.now() - started) / 1000)} s.`,
  `Machine: ${cpus().length} CPUs (nproc), ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}; the local cluster with one real node (containerd, kubelet), shared with other work while it ran.`,
  '',
  'Scenario: the sample worker pool (knative/samples/statefulset.yaml, the reference worker image built from the Dockerfile, real pods mounting the real ConfigMap), a Swarm over the 27 seed streams (Restart, MakeBeforeBreak, maxUnavailable 1), the local Knative harness (real ApiServerSource adapter, assign and restart under their own ServiceAccounts), then `kubectl scale sts/swarm-worker` 2→3→4→1→3, each step started when the previous one converged.',
  '',
  'Per step, over the window from the command until the workers\' own reports show every job run exactly once by the new replica count (capped at 240 s): *uncovered job-s* = Σ over jobs of the seconds no worker reported running it; *duplicate job-s* = Σ of the seconds two or more did; from the workers\' job.started/job.stopped log lines (examples/worker/README.md), read by test/support/coverage-recorder. *status converged*: the Swarm said Running at the new version with every pod Ready; *workers converged*: what the workers themselves ran agreed. A pod that died without stop lines ends at its container\'s terminated time. One run per setting: the numbers move by seconds from run to run with the machine\'s load and the kubelet\'s timing (e.g. whether a new worker loads its share before or after the losers restart decides between duplicate and uncovered seconds). Numbers, not assertions: issue 11 is expected to bring uncovered job-seconds to zero.',
  '',
];
const body = [...header, ...sections].join('\n');
if (syncArg >= 0) process.stdout.write(body + '\n');
else {
  const file = new URL('RESULTS.md', import.meta.url);
  writeFileSync(file, withSection(existsSync(file) ? readFileSync(file, 'utf8') : '', COVERAGE_SECTION, body));
  progress('wrote bench/RESULTS.md');
}
