// Observed handoffs on the real node, measured by what the workers report:
// hot-reloading reference workers (restart policy None) under Swarm-owned
// scaling (`kubectl scale swm`), make-before-break staged through the
// ConfigMap. Asserted: zero uncovered job-seconds across each resize (the
// coverage recorder, from the workers' own start/stop lines), every job run
// exactly once at the end, no pod restarted, and status never Ready while a
// job had no acknowledged owner.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CoreV1Api, CustomObjectsApi, KubeConfig, AppsV1Api } from '@kubernetes/client-node';
import type { Swarm } from '../../lib/api/types.js';
import { parse } from '../../lib/workerconfig/index.js';
import { startEndToEnd, type EndToEnd } from '../harness/end-to-end.js';
import { kubectl } from '../harness/local-knative.js';
import { runningExactlyOnce, sampleSwarmYaml, workerPoolYaml } from '../harness/worker-pool.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const NS = `handoff-${process.pid}`;

const getSwarm = async () => (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS, name: 'swarm-worker' })) as Swarm;
const configOf = async () => parse((await core.readNamespacedConfigMap({ namespace: NS, name: 'swarm-worker-config' })).data?.['config.yml'] ?? '');

let world: EndToEnd;
/** Every status seen while polling: Ready must never be True with a job uncovered. */
const statuses: Swarm['status'][] = [];

/** Settled: the StatefulSet at `replicas`, no handoff marks left, Running, each worker acknowledging the config's version. */
async function settled(replicas: number): Promise<void> {
  await eventually(`settled on ${replicas} worker(s)`, async () => {
    const s = await getSwarm();
    statuses.push(s.status);
    const config = await configOf();
    const marks = Object.values(config.workloads).some((w) => w.releasing || w.awaiting || w.released);
    const sts = await apps.readNamespacedStatefulSet({ namespace: NS, name: 'swarm-worker' });
    const st = s.status;
    return !marks &&
      sts.spec?.replicas === replicas &&
      st?.phase === 'Running' &&
      st.version === config.version &&
      st.uncoveredJobs === 0 &&
      st.workers?.length === replicas &&
      st.workers.every((w) => w.runningVersion === config.version)
      ? true
      : undefined;
  }, 150_000);
}

/** Resizes through the Swarm's scale subresource and measures the step by the workers' own reports. */
async function resize(replicas: number) {
  const from = Date.now();
  const uidsBefore = liveUids();
  await kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/swarm-worker', '--replicas', String(replicas)]);
  await settled(replicas);
  const { at } = await runningExactlyOnce(world.workers, seedStreams, replicas);
  const report = world.workers.report(seedStreams, { from, to: at });
  const uidsAfter = liveUids();
  const restarted = [...uidsAfter].filter(([name, uid]) => uidsBefore.has(name) && uidsBefore.get(name) !== uid).map(([name]) => name);
  return { report, restarted };
}

const liveUids = (): Map<string, string> =>
  new Map([...world.workers.pods.values()].filter((p) => p.deletedAt === undefined).map((p) => [p.name, p.uid]));

beforeAll(async () => {
  world = await startEndToEnd({ kubeconfig, namespace: NS, clusterWorkDir: inject('clusterWorkDir'), realNode: inject('realNode') });
});

afterAll(async () => {
  await world?.stop();
});

describe('hot-reloading workers, make-before-break, Swarm-owned scaling', () => {
  it('starts: 27 streams over 2 workers, each run exactly once', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], workerPoolYaml(NS, 2, world.workerImage));
    await kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(NS, seedStreams, { policy: 'None', replicas: 2 }));
    await settled(2);
    await runningExactlyOnce(world.workers, seedStreams, 2);
  });

  it('kubectl scale swm 2 → 3: the new worker starts its share before the losers drop it: zero uncovered job-seconds, no restart', async () => {
    const { report, restarted } = await resize(3);
    expect(report.gaps).toEqual([]);
    expect(report.totals.uncoveredSeconds).toBe(0);
    expect(restarted).toEqual([]);
    // Make-before-break: the moved jobs ran twice for a while, by design.
    expect(report.totals.jobsDuplicated).toBeGreaterThan(0);
  });

  it('kubectl scale swm 3 → 1: the survivor takes every job before the StatefulSet shrinks: zero uncovered job-seconds', async () => {
    const { report, restarted } = await resize(1);
    expect(report.gaps).toEqual([]);
    expect(report.totals.uncoveredSeconds).toBe(0);
    expect(restarted).toEqual([]);
  });

  it('status was never Ready while a job had no acknowledged owner', () => {
    const readyUncovered = statuses.filter((st) => st?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (st.uncoveredJobs ?? 0) > 0);
    expect(statuses.length).toBeGreaterThan(3);
    expect(readyUncovered).toEqual([]);
  });
});
