// The pool script, one home for what deployment-pool-e2e asserts on a
// Deployment pool and `npm run bench:pools` measures on both pool kinds: three
// hot-reloading reference workers over the seed's 27 streams, the Swarm
// scaled 3 → 5 → 2, a rolling update of the pod template, a pod deleted by
// hand, a pod crash-looping; after each step the pool settled and every job run exactly once, and
// what the step cost by the workers' own reports.
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Swarm } from '../../lib/api/types.js';
import { parse } from '../../lib/workerconfig/index.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';
import { apiClients } from './cluster-fixtures.js';
import type { EndToEnd } from './end-to-end.js';
import { crashLoop } from './node-containers.js';
import { kubectl } from './swarm-install.js';
import { deploymentPoolYaml, runningExactlyOnce, sampleSwarmYaml, swarmSettled, workerPoolYaml } from './worker-pool.js';

export type PoolKind = 'Deployment' | 'StatefulSet';

/** A step waits for pods to start, hand over and drain (the kubelet refreshes a mounted ConfigMap on its sync period). */
export const STEP_TIMEOUT = 600_000;
export const START_REPLICAS = 3;

/** What one step cost: the benchmark's table row. */
export interface StepCost {
  pool: PoolKind;
  step: string;
  /** Job starts during the step, by the workers' reports: each is a move (or a restart's reload). */
  moves: number;
  /** Pods alive at the step's start that are gone or have a new uid at its end, less a scale-down's departures. */
  podsReplaced: number;
  uncoveredSeconds: number;
  duplicateSeconds: number;
}

export interface StepOutcome {
  cost: StepCost;
  report: ReturnType<EndToEnd['workers']['report']>;
  /** Largest share minus smallest, at the end. */
  spread: number;
  /** Pods running jobs before and after (name → jobs). */
  before: Record<string, string[]>;
  after: Record<string, string[]>;
  /**
   * The assignments the Swarm wrote during the step, in order, as each worker's
   * share to be (its jobs less those it is releasing, plus those it awaits;
   * workers left with none dropped), consecutive repeats (handoff marks only)
   * merged: the Swarm reassigns as the pool's pods appear, so a step may take
   * more than one.
   */
  assignments: Record<string, string[]>[];
  /** For a failed assertion on moves: the step's job starts (ms from its start, job, pod) and the config versions written meanwhile. */
  trace: string;
}

/** One step of the script: what changes, and the worker count it ends at. */
export interface ScriptStep {
  name: string;
  replicas: number;
  change(run: PoolRun, before: Record<string, string[]>): Promise<unknown>;
}

/** The worker config in force in `namespace`. */
const configOf = async (core: CoreV1Api, namespace: string) =>
  parse((await core.readNamespacedConfigMap({ namespace, name: 'swarm-worker-config' })).data?.['config.yml'] ?? '');

/** The pod the pod-deleted step deletes: the first by name of those running jobs before it. */
export const victimOf = (before: Record<string, string[]>): string => Object.keys(before).sort()[0]!;

const scaleSwarm = (from: number, replicas: number): ScriptStep => ({
  name: `scale ${from} → ${replicas}`,
  replicas,
  change: (run) => kubectl(run.kubeconfig, ['-n', run.namespace, 'scale', 'swm/swarm-worker', '--replicas', String(replicas)]),
});

/** The script's steps after the start, by name (SCRIPT_STEPS: in order). */
export const SCRIPT = {
  scaleUp: scaleSwarm(START_REPLICAS, 5),
  scaleDown: scaleSwarm(5, 2),
  rollingUpdate: {
    name: 'rolling update',
    replicas: 2,
    change: (run) => kubectl(run.kubeconfig, ['-n', run.namespace, 'rollout', 'restart', `${run.pool.toLowerCase()}/swarm-worker`]),
  },
  podDeleted: {
    name: 'a pod deleted',
    replicas: 2,
    // Until the victim is gone from the API: a delete changes no generation, so the pool and the Swarm read as
    // settled (the victim still Ready, still running its jobs) before either has seen it.
    async change(run, before) {
      const name = victimOf(before);
      const { metadata } = await run.core.readNamespacedPod({ namespace: run.namespace, name });
      await run.core.deleteNamespacedPod({ namespace: run.namespace, name });
      const gone = async () => {
        const pods = await run.core.listNamespacedPod({ namespace: run.namespace });
        return !pods.items.some((p) => p.metadata?.uid === metadata?.uid);
      };
      await eventually(`${name} (${metadata?.uid}) gone`, gone, STEP_TIMEOUT - 120_000);
    },
  },
  crashLoop: {
    name: 'a pod crash-looping',
    replicas: 2,
    // The same victim crashed each time it runs until, while the kubelet backs off its restart, its peers hold its jobs.
    async change(run, before) {
      const victim = victimOf(before);
      const loop = await crashLoop(() => run.core.readNamespacedPod({ namespace: run.namespace, name: victim }), {
        crashes: 6,
        until: async () => (await configOf(run.core, run.namespace)).workloads[victim]?.jobs.length === 0,
      });
      if (loop.heldAt === undefined) throw new Error(`${victim} crashed ${loop.crashes} times: its peers never held its jobs while the kubelet backed off`);
      return loop;
    },
  },
} satisfies Record<string, ScriptStep>;
export const SCRIPT_STEPS: readonly ScriptStep[] = [SCRIPT.scaleUp, SCRIPT.scaleDown, SCRIPT.rollingUpdate, SCRIPT.podDeleted, SCRIPT.crashLoop];

/** The script on one pool, in its own namespace. */
export interface PoolRun {
  readonly pool: PoolKind;
  readonly kubeconfig: string;
  readonly namespace: string;
  readonly core: CoreV1Api;
  /** Every status read while settling: a test checks it never said Ready with a job uncovered. */
  readonly statuses: Swarm['status'][];
  /** The pool and its Swarm at START_REPLICAS, settled, every job run exactly once; the shares (pod → jobs). */
  start(): Promise<Record<string, string[]>>;
  /** One step: its change, then settled and every job run exactly once; what it cost, from its start to then. */
  step(step: ScriptStep): Promise<StepOutcome>;
}

/** The script on a pool of `pool` kind in `world`'s namespace. */
export function poolRun(world: EndToEnd, kubeconfig: string, namespace: string, pool: PoolKind): PoolRun {
  const { core, apps, readSwarm } = apiClients(kubeconfig, namespace);
  const statuses: Swarm['status'][] = [];

  /** The pods alive by the recorder (not deleted), name → uid. */
  const livePods = (): Map<string, string> =>
    new Map([...world.workers.pods.values()].filter((p) => p.deletedAt === undefined).map((p) => [p.name, p.uid]));

  /** The controller has seen the latest spec (else its status is the previous one's: a `rollout restart` just applied reads as rolled out). */
  const current = (o: { metadata?: { generation?: number }; status?: { observedGeneration?: number } }) =>
    o.metadata?.generation !== undefined && (o.status?.observedGeneration ?? 0) >= o.metadata.generation;

  /** The pool controller at `replicas`, every pod of the current template and Ready. */
  async function rolledOut(replicas: number): Promise<boolean> {
    if (pool === 'Deployment') {
      const d = await apps.readNamespacedDeployment({ namespace, name: 'swarm-worker' });
      return current(d) && d.spec?.replicas === replicas && d.status?.updatedReplicas === replicas && d.status?.replicas === replicas && d.status?.readyReplicas === replicas;
    }
    const s = await apps.readNamespacedStatefulSet({ namespace, name: 'swarm-worker' });
    return current(s) && s.spec?.replicas === replicas && s.status?.updatedReplicas === replicas && s.status?.readyReplicas === replicas && s.status?.currentRevision === s.status?.updateRevision;
  }

  /** Settled: the pool at `replicas` and rolled out, no marks, Running, each worker acknowledging, the departed pods gone. */
  async function settled(replicas: number): Promise<void> {
    await eventually(`${pool} settled on ${replicas} worker(s)`, async () => {
      const s = await readSwarm('swarm-worker');
      statuses.push(s.status);
      return swarmSettled(s, await configOf(core, namespace), replicas) && (await rolledOut(replicas)) && livePods().size === replicas ? true : undefined;
    }, STEP_TIMEOUT - 60_000);
  }

  const run: PoolRun = {
    pool,
    kubeconfig,
    namespace,
    core,
    statuses,
    async start(): Promise<Record<string, string[]>> {
      const poolYaml = pool === 'Deployment' ? deploymentPoolYaml : workerPoolYaml;
      await kubectl(kubeconfig, ['apply', '-f', '-'], poolYaml(namespace, START_REPLICAS, world.workerImage));
      await kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(namespace, seedStreams, { policy: 'None', replicas: START_REPLICAS, pool }));
      await settled(START_REPLICAS);
      return (await runningExactlyOnce(world.workers, seedStreams, START_REPLICAS, { anyPods: true })).byPod;
    },

    async step(step: ScriptStep): Promise<StepOutcome> {
      const from = Date.now();
      const before = world.workers.running(from).byPod;
      const uidsBefore = livePods();
      await step.change(run, before);
      await settled(step.replicas);
      const { at, byPod: after } = await runningExactlyOnce(world.workers, seedStreams, step.replicas, { anyPods: true, timeoutMs: 120_000 });
      const report = world.workers.report(seedStreams, { from, to: at });
      const started = world.workers.ownerships().ownerships.filter((o) => o.from > from && o.from <= at);
      const moves = started.length;
      const sizes = Object.values(after).map((jobs) => jobs.length);
      const uidsAfter = livePods();
      const podsReplaced = [...uidsBefore].filter(([pod, uid]) => uidsAfter.get(pod) !== uid).length - Math.max(0, uidsBefore.size - step.replicas);
      const cost = { pool, step: step.name, moves, podsReplaced, uncoveredSeconds: report.totals.uncoveredSeconds, duplicateSeconds: report.totals.duplicateSeconds };
      const podName = new Map([...world.workers.pods.values()].map((p) => [p.uid, p.name]));
      const writes = world.timeline.configMapWrites.filter((w) => w.name === 'swarm-worker-config' && w.at > from && w.at <= at);
      const assignments: Record<string, string[]>[] = [];
      for (const w of writes) {
        const config = parse(w.data['config.yml'] ?? '');
        const target = Object.fromEntries(
          Object.entries(config.workloads)
            .map(([worker, share]) => [worker, [...share.jobs.filter((j) => !share.releasing?.includes(j)), ...(share.awaiting ?? [])].sort()] as const)
            .filter(([, jobs]) => jobs.length > 0),
        );
        if (JSON.stringify(target) !== JSON.stringify(assignments.at(-1))) assignments.push(target);
      }
      const trace = [
        `${moves} job start(s) in the step:`,
        ...started.sort((a, b) => a.from - b.from).map((o) => `  +${o.from - from} ms ${o.job} on ${podName.get(o.source) ?? o.source}`),
        `${writes.length} write(s) of swarm-worker-config in the step, at ${writes.map((w) => `+${w.at - from}`).join(', ')} ms; assignments over ${assignments.map((a) => Object.keys(a).length).join(' → ')} worker(s)`,
      ].join('\n');
      return { cost, report, spread: Math.max(...sizes) - Math.min(...sizes), before, after, assignments, trace };
    },
  };
  return run;
}
