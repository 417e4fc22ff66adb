// npm run bench:failover [-- --trials N --faults freeze,partition --sizes 1,10,100 --skip-rest --skip-idle]
// Failure detection on the real node (docs/failure-detection.md), measured on
// a fresh local cluster with its real node, real Knative, and Swarm deployed
// there as a user deploys it:
//   1. failover time: the sample's two reference workers (spec.failover,
//      leaseSeconds 15), one frozen (SIGSTOP) or cut off from the API server
//      (iptables in its network namespace) per trial, the victims taking
//      turns; from the fault until the peer's own job.started reports cover
//      the victim's share (test/harness/failover-trial.ts, which the e2e tier
//      asserts on); no resync ping but the events' own;
//   2. cost at rest for 1, 10 and 100 workers (bench/failover-rest.ts);
//   3. idle with Knative's default autoscaler windows (bench/failover-idle.ts).
// → bench/RESULTS.md, one section per part (failover, failover-rest,
// failover-idle: `--trials 0` or a skip leaves that part's figures as they
// were). A benchmark: it asserts nothing about the numbers. Ctrl-C stops what
// it started.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { stopOnSignals } from '../dev/shutdown.js';
import { defaultWorkDir, startCluster } from '../test/controlplane/cluster.js';
import { startEndToEnd } from '../test/harness/end-to-end.js';
import { FailoverPool, LEASE_SECONDS, type Fault, type TrialResult } from '../test/harness/failover-trial.js';
import { kubectl } from '../test/harness/swarm-install.js';
import { serveNamespace } from '../test/harness/swarm-on-knative.js';
import { seedStreams } from '../test/support/fixtures.js';
import { periodMsOf, shippedResyncSchedule } from '../test/support/resync-schedule.js';
import { FAILOVER_IDLE_SECTION, FAILOVER_REST_SECTION, FAILOVER_SECTION, idleLine, restTable, trialsTable, type TrialFigures } from './failover-figures.js';
import { defaultAutoscalerWindows, idleAfter, resyncPingSource, type IdleRun } from './failover-idle.js';
import { baseline, restCost, type RestCost } from './failover-rest.js';
import { withSection } from './results-file.js';
import { measuredTree, realNodeMachine } from './run-info.js';

const { values: args } = parseArgs({
  options: {
    trials: { type: 'string', default: '20' },
    faults: { type: 'string', default: 'freeze,partition' },
    sizes: { type: 'string', default: '1,10,100' },
    'skip-rest': { type: 'boolean' },
    'skip-idle': { type: 'boolean' },
  },
});
const TRIALS = Number(args.trials);
// With no trials, one pool is enough: the idle part's.
const FAULTS = args.faults.split(',').filter(Boolean).slice(0, TRIALS > 0 ? undefined : 1) as Fault[];
const SIZES = args.sizes.split(',').filter(Boolean).map(Number);
const REST_WINDOW_MS = 60_000;
/** At least one resync ping after the change, and three minutes after it to get back to zero. */
const IDLE_WATCH_MS = periodMsOf(shippedResyncSchedule()) + 3 * 60_000;
/** As the tests' cluster: the kubelet refreshes a mounted ConfigMap every 5 s unless asked sooner. */
const SYNC_FREQUENCY = '5s';

const progress = (line: string) => process.stderr.write(`[bench:failover] ${new Date().toISOString().slice(11, 19)} ${line}\n`);

const stops: Array<() => Promise<void>> = [];
const aborter = new AbortController();
const stopAll = async () => {
  aborter.abort();
  for (const stop of stops.splice(0).reverse()) await stop().catch((err: unknown) => progress(`stop: ${String(err)}`));
};
const exit = stopOnSignals(stopAll, { onStopping: (signal) => progress(`${signal}: stopping`) });

interface Measured {
  trials: TrialFigures[];
  raw: TrialResult[];
  rest: RestCost[];
  idle?: IdleRun & { schedule: string };
  image: string;
}

async function measure(): Promise<Measured> {
  progress('starting the cluster (real node)');
  const cluster = await startCluster({
    workDir: join(defaultWorkDir, `bench-failover-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
    syncFrequency: SYNC_FREQUENCY,
    onProgress: (line) => progress(`  ${line}`),
    signal: aborter.signal,
  });
  stops.push(async () => {
    progress('stopping the cluster');
    await cluster.stop();
  });
  const kubeconfig = cluster.kubeconfigPath;
  if (!cluster.realNode) throw new Error('bench:failover runs the workers, Knative and Swarm as real pods: its cluster needs a real node');
  // One pool per fault, their trials side by side (the node's time is shared; each trial's figures are its own).
  const pools: FailoverPool[] = [];
  for (const fault of FAULTS) {
    const namespace = `bench-failover-${fault}`;
    progress(`Swarm on Knative (installed and deployed the first time) serving ${namespace}`);
    const world = await startEndToEnd({ kubeconfig, namespace, realNode: cluster.realNode, workDir: cluster.workDir, background: null });
    const pool = new FailoverPool(world, kubeconfig, namespace, seedStreams);
    stops.push(async () => {
      await pool.faults.undoAll();
      await world.stop();
    });
    pools.push(pool);
  }
  const measured: Measured = { trials: [], raw: [], rest: [], image: pools[0]!.world.workerImage };
  await Promise.all(pools.map((pool) => pool.deploy('MakeBeforeBreak')));
  measured.trials = await Promise.all(
    FAULTS.map(async (fault, at) => {
      const pool = pools[at]!;
      const figures = { fault, handoff: 'MakeBeforeBreak', takeoverMs: [] as Array<number | undefined>, recoveredMs: [] as number[], restarted: 0 };
      for (let i = 0; i < TRIALS; i++) {
        const result = await pool.trial(fault, `swarm-worker-${i % 2}`);
        measured.raw.push(result);
        figures.takeoverMs.push(result.takeoverMs);
        figures.recoveredMs.push(result.recoveredMs);
        if (result.restarted) figures.restarted++;
        progress(`${fault} ${i + 1}/${TRIALS}: failover ${result.takeoverMs === undefined ? `not seen ${result.diagnosis ?? ''}` : `${(result.takeoverMs / 1000).toFixed(1)} s`}, every job once again after ${(result.recoveredMs / 1000).toFixed(1)} s${result.restarted ? ' (liveness restart)' : ''}`);
      }
      return figures;
    }),
  );
  // The idle part keeps the first pool only.
  for (const pool of pools.slice(1)) {
    await pool.world.stop();
    await kubectl(kubeconfig, ['delete', 'namespace', pool.namespace, '--wait=true', '--timeout=180s']).catch(() => undefined);
  }
  const pool = pools[0]!;
  const namespace = pool.namespace;

  if (!args['skip-idle']) {
    progress("idle: Knative's default autoscaler windows, the namespace's resync PingSource as shipped");
    await defaultAutoscalerWindows(kubeconfig);
    const schedule = await resyncPingSource(kubeconfig, namespace);
    // The change: one job more, then the workers heartbeat on while nothing else changes.
    const change = () => kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarm(namespace, [...seedStreams, 'stream:idle']));
    measured.idle = { schedule, ...(await idleAfter(kubeconfig, change, IDLE_WATCH_MS, progress)) };
    progress(idleLine(measured.idle));
  }
  await pool.faults.undoAll();
  await pool.world.stop();
  await kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=true', '--timeout=180s']).catch(() => undefined);

  if (!args['skip-rest']) {
    progress(`cost at rest: the API server's requests with no workers (${REST_WINDOW_MS / 1000} s)`);
    const base = await baseline(kubeconfig, REST_WINDOW_MS);
    for (const size of SIZES) {
      const ns = `bench-rest-${size}`;
      await serveNamespace(kubeconfig, ns);
      mkdirSync('.swarm', { recursive: true });
      const eventsFile = join('.swarm', `bench-failover-rest-${size}.json`);
      measured.rest.push(await restCost(kubeconfig, ns, size, base, { windowMs: REST_WINDOW_MS, leaseSeconds: LEASE_SECONDS, progress, eventsFile }));
      progress(`at rest, ${size} worker(s): ${JSON.stringify(measured.rest.at(-1))}`);
      await kubectl(kubeconfig, ['delete', 'namespace', ns, '--wait=true', '--timeout=180s']).catch(() => undefined);
    }
  }
  return measured;
}

function sampleSwarm(namespace: string, jobs: readonly string[]): string {
  return JSON.stringify({
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name: 'swarm-worker', namespace },
    spec: {
      statefulSetName: 'swarm-worker',
      configMapName: 'swarm-worker-config',
      replicas: 2,
      restart: { policy: 'None', handoff: 'MakeBeforeBreak', maxUnavailable: 1 },
      failover: { leaseSeconds: LEASE_SECONDS },
      workload: { jobs },
    },
  });
}

const started = Date.now();
const tree = measuredTree();
let measured: Measured;
try {
  measured = await measure();
} catch (err) {
  progress(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  await exit(1);
  throw err;
}
await stopAll();

const header = (title: string) => [
  `## ${title} (bench:failover)`,
  '',
  `Command: \`npm run bench:failover -- --trials ${TRIALS} --faults ${FAULTS.join(',')}${args['skip-rest'] ? ' --skip-rest' : ` --sizes ${SIZES.join(',')}`}${args['skip-idle'] ? ' --skip-idle' : ''}\` (bench/failover.ts via tsx), this tree at ${tree}. Generated ${new Date().toISOString()}, ${Math.round((Date.now() - started) / 1000)} s.`,
  realNodeMachine(),
  '',
];
const sections: Array<[string, string[]]> = [];
if (TRIALS > 0)
  sections.push([
    FAILOVER_SECTION,
    [
      ...header('Failover: failure detection on the real node'),
      `Failover time (docs/failure-detection.md): a fresh cluster (the kubelet's sync period ${SYNC_FREQUENCY}, as in the tests), real Knative with the test stack's short autoscaler windows (6 s), Swarm deployed as \`npm run deploy\` does; the sample's two reference workers (image \`${measured.image}\`, spec.failover leaseSeconds ${LEASE_SECONDS}, the sample's readiness probe: every 1 s, failureThreshold 12; liveness every 10 s × 3) over the seed's 27 streams, make-before-break. Each fault has its own pool in its own namespace, the pools' trials run side by side; each trial faults one worker of its pool (the two take turns): *freeze* SIGSTOPs its container's processes, *partition* drops its packets to the API server (iptables in its pod's network namespace); the fault is undone once the Swarm's status shows the worker expired with nothing uncovered, and the next trial starts once every job runs exactly once again. *Failover*: from the fault until the peer's own job.started reports covered the victim's whole share (test/harness/failover-trial.ts, the same code \`test/integration/failover-e2e.test.ts\` asserts on). No resync ping but what the events bring.`,
      '',
      ...trialsTable(measured.trials, LEASE_SECONDS),
      '',
      'Raw trials (ms): ' + measured.raw.map((r) => `${r.fault}/${r.victim.slice(-1)}:${r.takeoverMs ?? '–'}`).join(' '),
    ],
  ]);
if (measured.rest.length > 0)
  sections.push([
    FAILOVER_REST_SECTION,
    [
      ...header('Failover: cost at rest'),
      `N workers under a Swarm with failover (leaseSeconds ${LEASE_SECONDS}, 2 jobs each), settled and the Broker quiet for 15 s (the event source's backlog from creating the pool drained), then ${REST_WINDOW_MS / 1000} s with nothing changing. The workers are KWOK pods (100 real worker pods do not fit this 2-core node): test/harness/kwok-acknowledger.ts acknowledged their shares until they settled, and the SDK's own heartbeat loop (sdk/typescript/src/heartbeat.ts) renewed each pod's \`<pod>.heartbeat\` Lease from the benchmark's process. *Wake-ups*: events of the namespace that Swarm's Broker took (real Knative; each wakes a function), the namespace's resync ping not included (this run has none there). *API requests*: the API server's apiserver_request_total over the window, less the same window with no workers (the cluster's own controllers, Knative's; noise of a few hundred per minute either way).`,
      '',
      ...restTable(measured.rest, LEASE_SECONDS),
    ],
  ]);
if (measured.idle)
  sections.push([
    FAILOVER_IDLE_SECTION,
    [
      ...header("Failover: idle with Knative's default autoscaler windows"),
      `Knative's default autoscaler windows (stable-window 60 s, scale-to-zero-grace-period 30 s, set on config-autoscaler for this part), the namespace's resync PingSource as shipped (knative/base/pingsource.yaml, \`${measured.idle.schedule}\`), the sample's two heartbeating workers on: after one change (a job added), watched ${IDLE_WATCH_MS / 60_000} min (at least one ping): ${idleLine(measured.idle)}`,
    ],
  ]);

const file = new URL('RESULTS.md', import.meta.url);
let text = existsSync(file) ? readFileSync(file, 'utf8') : '';
for (const [name, body] of sections) text = withSection(text, name, body.join('\n'));
writeFileSync(file, text);
progress(`wrote bench/RESULTS.md (${sections.map(([name]) => name).join(', ') || 'nothing measured'})`);
await exit(0);
