// A Deployment pool on the real node, measured by what the workers report:
// three hot-reloading reference workers (knative/samples/deployment.yaml) over
// the seed's 27 streams; the Swarm scales them 3 → 5 → 2, the Deployment rolls
// out a new pod template, a pod is deleted by hand. After each step: every job
// run exactly once, shares differ by at most one, moves (job starts in the
// step, by the workers' own reports) within the lower bound plus the replaced
// pods' shares, and zero uncovered job-seconds (the coverage recorder).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Swarm } from '../../lib/api/types.js';
import { lowerBound } from '../../lib/assignment/lower-bound.js';
import { parse } from '../../lib/workerconfig/index.js';
import { apiClients } from '../harness/cluster-fixtures.js';
import { startEndToEnd, type EndToEnd } from '../harness/end-to-end.js';
import { kubectl } from '../harness/local-knative.js';
import { deploymentPoolYaml, runningExactlyOnce, sampleSwarmYaml } from '../harness/worker-pool.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const NS = `deploy-pool-${process.pid}`;
const { core, apps, readSwarm } = apiClients(kubeconfig, NS);

const configOf = async () => parse((await core.readNamespacedConfigMap({ namespace: NS, name: 'swarm-worker-config' })).data?.['config.yml'] ?? '');
const swarmYaml = (replicas: number) => sampleSwarmYaml(NS, seedStreams, { policy: 'None', replicas, pool: 'Deployment' });

let world: EndToEnd;
const statuses: Swarm['status'][] = [];

/** The pods alive by the recorder (not deleted), name → uid. */
const livePods = (): Map<string, string> =>
  new Map([...world.workers.pods.values()].filter((p) => p.deletedAt === undefined).map((p) => [p.name, p.uid]));

/** Settled: the Deployment at `replicas` and rolled out, no marks, Running, each worker acknowledging, the departed pods gone. */
async function settled(replicas: number): Promise<void> {
  await eventually(`settled on ${replicas} worker(s)`, async () => {
    const s = await readSwarm('swarm-worker');
    statuses.push(s.status);
    const config = await configOf();
    const marks = Object.values(config.workloads).some((w) => w.releasing || w.awaiting || w.released);
    const d = await apps.readNamespacedDeployment({ namespace: NS, name: 'swarm-worker' });
    const st = s.status;
    const rolledOut = d.status?.updatedReplicas === replicas && d.status?.replicas === replicas && d.status?.readyReplicas === replicas;
    return !marks &&
      rolledOut &&
      livePods().size === replicas &&
      d.spec?.replicas === replicas &&
      Object.keys(config.workloads).length === replicas &&
      st?.phase === 'Running' &&
      st.version === config.version &&
      st.uncoveredJobs === 0 &&
      st.workers?.length === replicas &&
      st.workers.every((w) => w.coverage === 'Acknowledged')
      ? true
      : undefined;
  }, 240_000);
}

interface Step {
  report: ReturnType<EndToEnd['workers']['report']>;
  /** Job starts during the step, by the workers' reports: each is a move. */
  moves: number;
  spread: number;
  /** Pods running jobs before and after (name → jobs). */
  before: Record<string, string[]>;
  after: Record<string, string[]>;
}

async function step(change: () => Promise<unknown>, replicas: number): Promise<Step> {
  const from = Date.now();
  const before = world.workers.running(from).byPod;
  await change();
  await settled(replicas);
  const { at, byPod: after } = await runningExactlyOnce(world.workers, seedStreams, replicas, { anyPods: true, timeoutMs: 240_000 });
  const report = world.workers.report(seedStreams, { from, to: at });
  const moves = world.workers.ownerships().ownerships.filter((o) => o.from > from && o.from <= at).length;
  const sizes = Object.values(after).map((jobs) => jobs.length);
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

beforeAll(async () => {
  world = await startEndToEnd({ kubeconfig, namespace: NS, clusterWorkDir: inject('clusterWorkDir'), realNode: inject('realNode'), resyncEveryMs: 10_000 });
});

afterAll(async () => {
  await world?.stop();
});

describe('a Deployment pool of hot-reloading workers', () => {
  it('starts: 27 streams over 3 pods of a Deployment, each run exactly once', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], deploymentPoolYaml(NS, 3, world.workerImage));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(3));
    await settled(3);
    const { byPod } = await runningExactlyOnce(world.workers, seedStreams, 3, { anyPods: true });
    expect(Object.values(byPod).map((jobs) => jobs.length).sort()).toEqual([9, 9, 9]);
  });

  it('kubectl scale swm 3 → 5: the new pods take their shares before the others drop them: zero uncovered job-seconds', async () => {
    const s = await step(() => kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/swarm-worker', '--replicas', '5']), 5);
    expect({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 }).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 5));
  });

  it('kubectl scale swm 5 → 2: the departing pods run their jobs until the survivors acknowledge them: zero uncovered job-seconds', async () => {
    const s = await step(() => kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/swarm-worker', '--replicas', '2']), 2);
    expect({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 }).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  });

  it('a rolling update (new pod template): each replaced pod hands its share to its replacement, every job moves once: zero uncovered job-seconds', async () => {
    const s = await step(() => kubectl(kubeconfig, ['-n', NS, 'rollout', 'restart', 'deployment/swarm-worker']), 2);
    expect({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 }).toEqual({ gaps: [], uncovered: 0, spread: true });
    // Every pod replaced: each job moves exactly once, to its pod's replacement.
    expect(Object.keys(s.after).some((pod) => pod in s.before)).toBe(false);
    expect(s.moves).toBe(seedStreams.length);
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  });

  it('a pod deleted by hand: its replacement takes its share before it stops: zero uncovered job-seconds', async () => {
    const victim = Object.keys(world.workers.running().byPod).sort()[0]!;
    const s = await step(() => core.deleteNamespacedPod({ namespace: NS, name: victim }), 2);
    expect({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 }).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.after[victim]).toBeUndefined();
    expect(s.moves).toBe(s.before[victim]!.length);
    expect(s.moves).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  });

  it('status was never Ready while a job had no acknowledged owner', () => {
    const readyUncovered = statuses.filter((st) => st?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (st.uncoveredJobs ?? 0) > 0);
    expect(statuses.length).toBeGreaterThan(3);
    expect(readyUncovered).toEqual([]);
  });
});
