// A Deployment pool on the real node, measured by what the workers report:
// three hot-reloading reference workers (knative/samples/deployment.yaml) over
// the seed's 27 streams; the Swarm scales them 3 → 5 → 2, the Deployment rolls
// out a new pod template, a pod is deleted by hand. After each step: every job
// run exactly once, shares differ by at most one, moves (job starts in the
// step, by the workers' own reports) within the lower bound (a departed or
// replaced pod's share included), and zero uncovered job-seconds (the
// coverage recorder). Then the same script on a StatefulSet pool of the same
// workers (knative/samples/statefulset.yaml), for the README's side-by-side
// table (printed at the end); there only exactly-once and balance are asserted:
// a StatefulSet's pod is replaced under its own name, its jobs waiting for it.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Swarm } from '../../lib/api/types.js';
import { lowerBound } from '../../lib/assignment/lower-bound.js';
import { parse } from '../../lib/workerconfig/index.js';
import { apiClients } from '../harness/cluster-fixtures.js';
import { startEndToEnd, type EndToEnd } from '../harness/end-to-end.js';
import { kubectl } from '../harness/local-knative.js';
import { deploymentPoolYaml, runningExactlyOnce, sampleSwarmYaml, workerPoolYaml } from '../harness/worker-pool.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

type PoolKind = 'Deployment' | 'StatefulSet';

const kubeconfig = inject('kubeconfig');
const NS = `deploy-pool-${process.pid}`;
const { core, apps, readSwarm } = apiClients(kubeconfig, NS);

const configOf = async () => parse((await core.readNamespacedConfigMap({ namespace: NS, name: 'swarm-worker-config' })).data?.['config.yml'] ?? '');
const swarmYaml = (pool: PoolKind, replicas: number) => sampleSwarmYaml(NS, seedStreams, { policy: 'None', replicas, pool });

/** A step waits for pods to start, hand over and drain (the kubelet refreshes a mounted ConfigMap within about a minute). */
const STEP_TIMEOUT = 600_000;

let world: EndToEnd;
const statuses: Swarm['status'][] = [];
/** One row per step and pool kind: the README's table. */
const measured: Array<{ pool: PoolKind; step: string; moves: number; podsReplaced: number; uncoveredSeconds: number; duplicateSeconds: number }> = [];

/** The pods alive by the recorder (not deleted), name → uid. */
const livePods = (): Map<string, string> =>
  new Map([...world.workers.pods.values()].filter((p) => p.deletedAt === undefined).map((p) => [p.name, p.uid]));

/** The pool controller at `replicas`, every pod of the current template and Ready. */
async function rolledOut(pool: PoolKind, replicas: number): Promise<boolean> {
  if (pool === 'Deployment') {
    const d = await apps.readNamespacedDeployment({ namespace: NS, name: 'swarm-worker' });
    return d.spec?.replicas === replicas && d.status?.updatedReplicas === replicas && d.status?.replicas === replicas && d.status?.readyReplicas === replicas;
  }
  const s = await apps.readNamespacedStatefulSet({ namespace: NS, name: 'swarm-worker' });
  return s.spec?.replicas === replicas && s.status?.updatedReplicas === replicas && s.status?.readyReplicas === replicas && s.status?.currentRevision === s.status?.updateRevision;
}

/** Settled: the pool at `replicas` and rolled out, no marks, Running, each worker acknowledging, the departed pods gone. */
async function settled(pool: PoolKind, replicas: number): Promise<void> {
  await eventually(`${pool} settled on ${replicas} worker(s)`, async () => {
    const s = await readSwarm('swarm-worker');
    statuses.push(s.status);
    const config = await configOf();
    const marks = Object.values(config.workloads).some((w) => w.releasing || w.awaiting || w.released);
    const st = s.status;
    return !marks &&
      (await rolledOut(pool, replicas)) &&
      livePods().size === replicas &&
      Object.keys(config.workloads).length === replicas &&
      st?.phase === 'Running' &&
      st.version === config.version &&
      st.uncoveredJobs === 0 &&
      st.workers?.length === replicas &&
      st.workers.every((w) => w.coverage === 'Acknowledged')
      ? true
      : undefined;
  }, STEP_TIMEOUT - 60_000);
}

interface Step {
  report: ReturnType<EndToEnd['workers']['report']>;
  /** Job starts during the step, by the workers' reports: each is a move (or a restart's reload). */
  moves: number;
  spread: number;
  /** Pods running jobs before and after (name → jobs). */
  before: Record<string, string[]>;
  after: Record<string, string[]>;
}

async function step(pool: PoolKind, name: string, change: () => Promise<unknown>, replicas: number): Promise<Step> {
  const from = Date.now();
  const before = world.workers.running(from).byPod;
  const uidsBefore = livePods();
  await change();
  await settled(pool, replicas);
  const { at, byPod: after } = await runningExactlyOnce(world.workers, seedStreams, replicas, { anyPods: true, timeoutMs: 120_000 });
  const report = world.workers.report(seedStreams, { from, to: at });
  const moves = world.workers.ownerships().ownerships.filter((o) => o.from > from && o.from <= at).length;
  const sizes = Object.values(after).map((jobs) => jobs.length);
  const uidsAfter = livePods();
  const podsReplaced = [...uidsBefore].filter(([pod, uid]) => uidsAfter.get(pod) !== uid).length - Math.max(0, uidsBefore.size - replicas);
  measured.push({ pool, step: name, moves, podsReplaced, uncoveredSeconds: report.totals.uncoveredSeconds, duplicateSeconds: report.totals.duplicateSeconds });
  return { report, moves, spread: Math.max(...sizes) - Math.min(...sizes), before, after };
}

/**
 * Fewest moves from `before` to `replicas` workers given which pods left (the
 * assigner's lower bound, lib/assignment/lower-bound.ts): a departed pod's
 * share must move, so a replaced pod's share is part of it (it moves once, to
 * its replacement).
 */
function movesAllowed(before: Record<string, string[]>, after: Record<string, string[]>, replicas: number): number {
  const survivors = Object.keys(before).filter((pod) => pod in after);
  const departed = Object.keys(before).filter((pod) => !(pod in after));
  // Survivors as ordinals 0…, the departed beyond the new count: the bound's own model of who stays.
  const previous = Object.fromEntries([
    ...survivors.map((pod, i) => [`w-${i}`, before[pod]!] as const),
    ...departed.map((pod, i) => [`w-${replicas + i}`, before[pod]!] as const),
  ]);
  return lowerBound({ statefulSetName: 'w', replicas, jobs: seedStreams, previous })?.moves ?? 0;
}

const scaleSwarm = (replicas: number) => () => kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/swarm-worker', '--replicas', String(replicas)]);
const balanced = (s: Step) => ({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 });

beforeAll(async () => {
  world = await startEndToEnd({ kubeconfig, namespace: NS, clusterWorkDir: inject('clusterWorkDir'), realNode: inject('realNode'), resyncEveryMs: 10_000 });
});

afterAll(async () => {
  // The README's table (Deployment and StatefulSet pools, same script).
  const rows = measured.map((m) => `| ${m.step} | ${m.pool} | ${m.moves} | ${m.podsReplaced} | ${m.uncoveredSeconds.toFixed(1)} | ${m.duplicateSeconds.toFixed(1)} |`);
  process.stdout.write(['', '| step | pool | job starts (moves) | pods replaced | uncovered job-s | duplicate job-s |', '| --- | --- | --- | --- | --- | --- |', ...rows, ''].join('\n'));
  await world?.stop();
});

describe('a Deployment pool of hot-reloading workers', () => {
  it('starts: 27 streams over 3 pods of a Deployment, each run exactly once', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], deploymentPoolYaml(NS, 3, world.workerImage));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml('Deployment', 3));
    await settled('Deployment', 3);
    const { byPod } = await runningExactlyOnce(world.workers, seedStreams, 3, { anyPods: true });
    expect(Object.values(byPod).map((jobs) => jobs.length).sort()).toEqual([9, 9, 9]);
  }, STEP_TIMEOUT);

  it('kubectl scale swm 3 → 5: the new pods take their shares before the others drop them: zero uncovered job-seconds', async () => {
    const s = await step('Deployment', 'scale 3 → 5', scaleSwarm(5), 5);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 5));
  }, STEP_TIMEOUT);

  it('kubectl scale swm 5 → 2: the departing pods run their jobs until the survivors acknowledge them: zero uncovered job-seconds', async () => {
    const s = await step('Deployment', 'scale 5 → 2', scaleSwarm(2), 2);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  }, STEP_TIMEOUT);

  it('a rolling update (new pod template): each replaced pod hands its share to its replacement, every job moves once: zero uncovered job-seconds', async () => {
    const s = await step('Deployment', 'rolling update', () => kubectl(kubeconfig, ['-n', NS, 'rollout', 'restart', 'deployment/swarm-worker']), 2);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    // Every pod replaced: each job moves exactly once, to its pod's replacement.
    expect(Object.keys(s.after).some((pod) => pod in s.before)).toBe(false);
    expect(s.moves).toBe(seedStreams.length);
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  }, STEP_TIMEOUT);

  it('a pod deleted by hand: its replacement takes its share before it stops: zero uncovered job-seconds', async () => {
    const victim = Object.keys(world.workers.running().byPod).sort()[0]!;
    const s = await step('Deployment', 'a pod deleted', () => core.deleteNamespacedPod({ namespace: NS, name: victim }), 2);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.after[victim]).toBeUndefined();
    expect(s.moves).toBe(s.before[victim]!.length);
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  }, STEP_TIMEOUT);

  it('status was never Ready while a job had no acknowledged owner', () => {
    const readyUncovered = statuses.filter((st) => st?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (st.uncoveredJobs ?? 0) > 0);
    expect(statuses.length).toBeGreaterThan(3);
    expect(readyUncovered).toEqual([]);
  });
});

describe('the same script on a StatefulSet pool (for comparison)', () => {
  it('the Deployment pool is removed: its pods stop once the Swarm (and its ConfigMap) is gone', async () => {
    await kubectl(kubeconfig, ['-n', NS, 'delete', 'swm', 'swarm-worker', '--wait=true']);
    await eventually('the ConfigMap collected', async () => (await core.listNamespacedConfigMap({ namespace: NS })).items.every((c) => c.metadata?.name !== 'swarm-worker-config') || undefined, 60_000);
    await kubectl(kubeconfig, ['-n', NS, 'delete', 'deployment', 'swarm-worker', '--wait=true']);
    await eventually('the Deployment\'s pods gone', async () => livePods().size === 0 || undefined, 150_000);
  }, STEP_TIMEOUT);

  it('starts: 27 streams over 3 pods of a StatefulSet', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], workerPoolYaml(NS, 3, world.workerImage));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml('StatefulSet', 3));
    await settled('StatefulSet', 3);
    await runningExactlyOnce(world.workers, seedStreams, 3);
  }, STEP_TIMEOUT);

  for (const [name, change, replicas] of [
    ['scale 3 → 5', scaleSwarm(5), 5],
    ['scale 5 → 2', scaleSwarm(2), 2],
    ['rolling update', () => kubectl(kubeconfig, ['-n', NS, 'rollout', 'restart', 'statefulset/swarm-worker']), 2],
    ['a pod deleted', () => core.deleteNamespacedPod({ namespace: NS, name: 'swarm-worker-0' }), 2],
  ] as const) {
    it(`${name}: every job exactly once at the end, balanced`, async () => {
      const s = await step('StatefulSet', name, change, replicas);
      expect(s.spread).toBeLessThanOrEqual(1);
    }, STEP_TIMEOUT);
  }
});
