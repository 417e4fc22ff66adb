// npm run bench:pools — the same script on both pool kinds, side by side: on a
// fresh local cluster with its real node, real Knative installed on it and
// Swarm deployed there as a user deploys it (test/harness/swarm-on-knative.ts:
// `npm run deploy`'s path, once, for both pools), three hot-reloading reference
// workers over the seed's 27 streams, the Swarm scaled 3 → 5 → 2, a rolling
// update, a pod deleted (test/harness/pool-script.ts, the script
// deployment-pool-e2e asserts on a Deployment pool), first on a Deployment
// pool, then on a StatefulSet pool, each in its own namespace. Per step: job
// starts, pods replaced, uncovered and duplicate job-seconds, from the
// workers' own reports → bench/RESULTS.md (bench:pools). A benchmark, not a
// test: it asserts nothing about the numbers. Ctrl-C stops what it started.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stopOnSignals } from '../dev/shutdown.js';
import { defaultWorkDir, startCluster } from '../test/controlplane/cluster.js';
import { startEndToEnd } from '../test/harness/end-to-end.js';
import { kubectl } from '../test/harness/swarm-install.js';
import { poolRun, SCRIPT_STEPS, START_REPLICAS, type PoolKind, type StepCost } from '../test/harness/pool-script.js';
import { POOLS_SECTION, poolsTable } from './pools-table.js';
import { withSection } from './results-file.js';
import { measuredTree, realNodeMachine } from './run-info.js';

const POOLS: readonly PoolKind[] = ['Deployment', 'StatefulSet'];
/** As the tests' cluster: handoffs to hot-reloading workers wait for the kubelet to refresh their mounted ConfigMap. */
const SYNC_FREQUENCY = '5s';

const progress = (line: string) => process.stderr.write(`[bench:pools] ${line}\n`);

// What this run started, stopped newest first, on success, failure or a signal;
// a start still in progress is waited for first, so nothing it launches is missed.
const stops: Array<() => Promise<void>> = [];
const aborter = new AbortController();
let stopping = false;
let inProgress: Promise<unknown> = Promise.resolve();
const stopAll = async () => {
  stopping = true;
  aborter.abort();
  await inProgress.catch(() => undefined);
  for (const stop of stops.splice(0).reverse()) await stop().catch((err: unknown) => progress(`stop: ${String(err)}`));
};
const exit = stopOnSignals(stopAll, { onStopping: (signal) => progress(`${signal}: stopping`) });

/** Starts something and registers its stop; returns it and a stop that runs now, once. */
async function tracked<T>(starting: Promise<T>, stop: (started: T) => Promise<void>): Promise<[T, () => Promise<void>]> {
  inProgress = starting;
  const value = await starting;
  const once = async () => {
    const at = stops.indexOf(once);
    if (at >= 0) stops.splice(at, 1);
    await stop(value);
  };
  stops.push(once);
  if (stopping) throw new Error('stopping');
  return [value, once];
}

async function measure(): Promise<{ costs: StepCost[]; image: string }> {
  progress('starting the cluster (real node)');
  const [cluster] = await tracked(
    startCluster({
      workDir: join(defaultWorkDir, `bench-pools-${process.pid}`),
      ephemeral: true,
      ownerPid: process.pid,
      syncFrequency: SYNC_FREQUENCY,
      onProgress: (line) => progress(`  ${line}`),
      signal: aborter.signal,
    }),
    async (c) => {
      progress('stopping the cluster');
      await c.stop();
    },
  );
  const kubeconfig = cluster.kubeconfigPath;
  if (!cluster.realNode) throw new Error('bench:pools runs the workers, Knative and Swarm as real pods: its cluster needs a real node');
  const costs: StepCost[] = [];
  let image = '?';
  for (const pool of POOLS) {
    const namespace = `bench-pools-${pool.toLowerCase()}`;
    progress(`${pool}: Swarm on Knative (installed and deployed the first time) serving ${namespace}`);
    const [world, stopWorld] = await tracked(
      // Outside vitest: the cluster's work directory given, and no background install to wait for (Knative is installed in the foreground).
      startEndToEnd({ kubeconfig, namespace, realNode: cluster.realNode, workDir: cluster.workDir, background: null, resyncEveryMs: 10_000 }),
      async (w) => {
        await w.stop();
        // The next pool gets the node to itself.
        await kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=true', '--timeout=180s']).catch(() => undefined);
      },
    );
    image = world.workerImage;
    const run = poolRun(world, kubeconfig, namespace, pool);
    progress(`${pool}: start at ${START_REPLICAS}`);
    await run.start();
    for (const step of SCRIPT_STEPS) {
      progress(`${pool}: ${step.name}`);
      const { cost } = await run.step(step);
      costs.push(cost);
      progress(`${pool}: ${step.name}: ${cost.moves} job starts, ${cost.podsReplaced} pod(s) replaced, uncovered ${cost.uncoveredSeconds.toFixed(1)} job-s, duplicate ${cost.duplicateSeconds.toFixed(1)} job-s`);
    }
    progress(`${pool}: removing its namespace`);
    await stopWorld();
  }
  return { costs, image };
}

const started = Date.now();
const tree = measuredTree();
let measured: { costs: StepCost[]; image: string };
try {
  measured = await measure();
} catch (err) {
  progress(`failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  await exit(1);
  throw err;
}
await stopAll();

const body = [
  '## Pool benchmark: the same script on a Deployment pool and a StatefulSet pool',
  '',
  `Command: \`npm run bench:pools\` (bench/pools.ts via tsx), this tree at ${tree}. Generated ${new Date().toISOString()}, ${Math.round((Date.now() - started) / 1000)} s.`,
  realNodeMachine(),
  '',
  `Scenario (test/harness/pool-script.ts, the script \`test/integration/deployment-pool-e2e.test.ts\` asserts on a Deployment pool): a fresh cluster, the kubelet's sync period ${SYNC_FREQUENCY} (as in the tests), real Knative (Serving, Eventing, Traefik) with Swarm deployed on it as \`npm run deploy\` does (events on the real path: ApiServerSource → Broker → Triggers → the functions' Knative Services; the resync ping posted to the Broker every 10 s); ${START_REPLICAS} hot-reloading reference workers (restart policy None; image \`${measured.image}\`) over the seed's 27 streams, first as a Deployment (knative/samples/deployment.yaml), then as a StatefulSet (knative/samples/statefulset.yaml), each in its own namespace; then \`kubectl scale swm\` 3 → 5 and 5 → 2, \`kubectl rollout restart\` (a rolling update of the pod template), the first pod by name deleted, then the first pod by name crash-looping (its container SIGKILLed from the node, as an OOM kill, each time it runs, until its peers hold its jobs while the kubelet backs off its restart: the first crash is restarted at once, the second backed off 10 s). Each step runs from its command until the pool is rolled out and settled (no handoff marks, the Swarm Running with every worker acknowledging) and the workers' own reports show every job run exactly once. *job starts (moves)*: every job start in the step, a move or a reload after a restart; *pods replaced*: pods of the step's start gone or replaced (a scale-down's departures not counted); *uncovered job-s* / *duplicate job-s*: Σ over jobs of the seconds no worker / two or more reported running it (test/support/coverage-recorder, from the workers' job.started/job.stopped lines).`,
  '',
  ...poolsTable(measured.costs),
  '',
  "Reading it: neither pool leaves a job uncovered when a pod is replaced; they pay in moves. A Deployment's replaced pod hands its share once, to its replacement (a new name), while it still runs it. A StatefulSet's replacement has the old pod's name and is created only once the old pod is gone, so its jobs go twice: to serving peers while the old pod terminates, then to the replacement (about twice the job starts, and the duplicate seconds of both handoffs, make-before-break). Scaling costs about the same on both (the lower bound; a Deployment's scale-down victims are its own choice). One run: the seconds move with the machine's load and the kubelet's timing; the zeros and the job starts are the stable part.",
].join('\n');

const file = new URL('RESULTS.md', import.meta.url);
writeFileSync(file, withSection(existsSync(file) ? readFileSync(file, 'utf8') : '', POOLS_SECTION, body));
progress(`wrote bench/RESULTS.md (${POOLS_SECTION})`);
await exit(0);
