// The whole system on the real control plane: the real ApiServerSource adapter
// → local broker (knative/base/triggers.yaml) → assign/restart hosts running
// under their own ServiceAccount tokens → real API server, StatefulSet
// controller, garbage collector and KWOK nodes.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { CloudEvent } from 'cloudevents';
import type { Swarm } from '../../lib/api/types.js';
import { diff } from '../../lib/plan/index.js';
import { assignmentOf, parse } from '../../lib/workerconfig/index.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import type { Delivery } from '../../dev/broker/local-broker.js';
import { defaultWorkDir } from '../controlplane/cluster.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from '../harness/local-knative.js';
import { seedStreams } from '../support/fixtures.js';
import { scrapeTotal } from '../support/metrics.js';
import { Timeline, eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const apps = kc.makeApiClient(AppsV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);

const NS = `e2e-${process.pid}`;
const swarmPath = { group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS };

function statefulSetYaml(replicas: number): string {
  return `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: swarm-worker, namespace: ${NS}}
spec:
  serviceName: swarm-worker
  replicas: ${replicas}
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: swarm-worker}}
  template:
    metadata: {labels: {app: swarm-worker, k8slab.info/swarm: swarm-worker}}
    spec:
      # KWOK's tainted fake nodes: these pods run nothing.
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 0
      containers: [{name: worker, image: swarm-worker}]
`;
}

function swarmYaml(jobs: string[]): string {
  return `apiVersion: k8slab.info/v1alpha1
kind: Swarm
metadata: {name: swarm-worker, namespace: ${NS}}
spec:
  statefulSetName: swarm-worker
  configMapName: swarm-worker-config
  restart: {policy: Restart, handoff: MakeBeforeBreak, maxUnavailable: 1}
  workload:
    jobs:
${jobs.map((j) => `      - ${JSON.stringify(j)}`).join('\n')}
`;
}

const getSwarm = async () => (await custom.getNamespacedCustomObject({ ...swarmPath, name: 'swarm-worker' })) as Swarm;
const getConfigMap = () => core.readNamespacedConfigMap({ namespace: NS, name: 'swarm-worker-config' });
const configOf = async () => parse((await getConfigMap()).data?.['config.yml'] ?? '');

/** Converged: Running at `version`, every pod Ready, nothing pending. */
async function converged(version: number, replicas: number): Promise<Swarm> {
  return eventually(`Swarm Running at version ${version} with ${replicas} ready`, async () => {
    const s = await getSwarm();
    const st = s.status;
    return st?.phase === 'Running' && st.version === version && st.readyReplicas === replicas && st.observedGeneration === s.metadata.generation ? s : undefined;
  });
}

let local: LocalKnative;
let timeline: Timeline;
const delivered: Delivery[] = [];

beforeAll(async () => {
  await installSwarm(kubeconfig);
  await enableNamespace(kubeconfig, NS);
  timeline = await Timeline.start(kubeconfig, NS);
  local = await startLocalKnative({
    adminKubeconfig: kubeconfig,
    namespace: NS,
    workDir: join(defaultWorkDir, 'e2e', NS),
    backoffScale: 0.2,
    onDelivery: (d) => delivered.push(d),
  });
});

afterAll(async () => {
  timeline?.stop();
  await local?.stop();
  await kubectl(kubeconfig, ['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

describe('the seed sample, end to end', () => {
  it('assigns the 27 streams over 2 workers, each exactly once, balanced', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSetYaml(2));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(seedStreams));
    const swarm = await converged(1, 2);
    const config = await configOf();
    const shares = Object.values(config.workloads).map((w) => w.jobs.length);
    expect(Object.keys(config.workloads).sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    expect(shares.sort()).toEqual([13, 14]);
    expect(Object.values(config.workloads).flatMap((w) => w.jobs).sort()).toEqual([...seedStreams].sort());
    const cm = await getConfigMap();
    expect(cm.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Swarm', name: 'swarm-worker', uid: swarm.metadata.uid, controller: true });
    expect(swarm.status?.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Converged' });
  });

  it('scales to 3: restarts exactly the changed workers, one at a time, gainer Ready before each loser stops', async () => {
    const before = assignmentOf(await configOf());
    const oldUids = new Map(timeline.livesOf('swarm-worker-0').concat(timeline.livesOf('swarm-worker-1')).map((p) => [p.name, p.uid]));
    const restartsBefore = await scrapeTotal([local.hosts.restart[0]!.port], 'swarm_pod_restarts_total');
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/swarm-worker', '--replicas', '3']);
    await converged(2, 3);
    const after = assignmentOf(await configOf());
    const change = diff(before, after);
    expect(change.moved).toBe(9); // 27 over 3: the new worker takes 9; nothing else moves
    expect([...change.changedWorkers].sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);

    // Each changed worker's pod that held the older share was stopped; the new worker never was.
    const stale = ['swarm-worker-0', 'swarm-worker-1'].map((name) => {
      const old = timeline.livesOf(name).find((l) => l.uid === oldUids.get(name));
      expect(old?.deletingAt, `${name}: the pod holding v1 was restarted`).toBeDefined();
      // The replacement: the first pod of that name created after the old one was stopped.
      const next = timeline.livesOf(name).find((l) => l.createdAt >= old!.deletingAt!);
      expect(next?.readyAt, `${name}: its replacement became Ready`).toBeDefined();
      return { name, old: old!, next: next! };
    });
    expect(timeline.livesOf('swarm-worker-2').filter((l) => l.deletingAt !== undefined)).toEqual([]);

    // Make-before-break: every moved job's new owner was Ready before its old owner was stopped.
    const gainer = timeline.livesOf('swarm-worker-2')[0]!;
    expect(gainer.readyAt).toBeDefined();
    for (const move of change.moves.filter((m) => m.from && m.to)) {
      const loser = stale.find((s) => s.name === move.from)!;
      expect(loser.old.deletingAt! >= gainer.readyAt!, `${move.job}: ${move.from} stopped after ${move.to} was Ready`).toBe(true);
    }
    // Paced by maxUnavailable=1: the second restart began after the first replacement was Ready.
    const [first, second] = stale.sort((a, b) => a.old.deletingAt! - b.old.deletingAt!);
    expect(second!.old.deletingAt! >= first!.next.readyAt!, JSON.stringify(stale)).toBe(true);

    // /metrics agrees with what the cluster saw: exactly those two restarts, each once.
    expect((await scrapeTotal([local.hosts.restart[0]!.port], 'swarm_pod_restarts_total')) - restartsBefore).toBe(2);
    // The watch may deliver the last write a moment after the metric counted it.
    const writes = async () =>
      scrapeTotal([local.hosts.assign[0]!.port, local.hosts.restart[0]!.port], 'swarm_configmap_writes_total');
    const observed = () => timeline.configMapWrites.filter((w) => w.name === 'swarm-worker-config').length;
    await eventually('ConfigMap writes counted = ConfigMap writes watched', async () => (await writes()) === observed(), 10_000).catch(() => undefined);
    expect(await writes()).toBe(observed());
    expect(readRestarts((await getConfigMap()).metadata?.annotations ?? {}).steps).toEqual([]);
  });

  it('ignores duplicated, reordered and stale real events: no ConfigMap write, no pod deletion', async () => {
    const real = delivered.map((d) => d.event).filter((e) => e.type.startsWith('dev.knative.apiserver.'));
    expect(real.length).toBeGreaterThan(5);
    const rv = (await getConfigMap()).metadata?.resourceVersion;
    const deletions = [...timeline.pods.values()].filter((p) => p.deletingAt !== undefined).length;
    const replay: CloudEvent<unknown>[] = [...real].reverse().flatMap((e) => [e, e]);
    for (const e of replay) local.broker.publish(e);
    await local.broker.idle();
    expect((await getConfigMap()).metadata?.resourceVersion).toBe(rv);
    expect([...timeline.pods.values()].filter((p) => p.deletingAt !== undefined).length).toBe(deletions);
    expect(local.broker.deadLetters).toEqual([]);
  });

  it('scales down to 1: the last worker owns every stream', async () => {
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/swarm-worker', '--replicas', '1']);
    await converged(3, 1);
    const config = await configOf();
    expect(Object.keys(config.workloads)).toEqual(['swarm-worker-0']);
    expect([...config.workloads['swarm-worker-0']!.jobs].sort()).toEqual([...seedStreams].sort());
  });

  it('adds and removes jobs: exactly the new set, once', async () => {
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/swarm-worker', '--replicas', '2']);
    await converged(4, 2);
    const jobs = [...seedStreams.slice(2), 'stream:new1', 'stream:new2', 'stream:new3'];
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(jobs));
    await converged(5, 2);
    const config = await configOf();
    expect(Object.values(config.workloads).flatMap((w) => w.jobs).sort()).toEqual([...jobs].sort());
    expect(Object.values(config.workloads).map((w) => w.jobs.length).sort()).toEqual([14, 14]);
  });

  it('an invalid spec: Ready=False/InvalidSpec, a Warning Event, and the ConfigMap untouched', async () => {
    const rv = (await getConfigMap()).metadata?.resourceVersion;
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(['stream:a', 'stream:b', 'stream:a']));
    const swarm = await eventually('InvalidSpec', async () => {
      const s = await getSwarm();
      const ready = s.status?.conditions?.find((c) => c.type === 'Ready');
      return ready?.reason === 'InvalidSpec' && s.status?.observedGeneration === s.metadata.generation ? s : undefined;
    });
    expect(swarm.status?.phase).toBe('Degraded');
    expect(swarm.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/duplicate job names: "stream:a"/);
    const events = await eventually('an InvalidSpec Event', async () => {
      const list = await core.listNamespacedEvent({ namespace: NS, fieldSelector: 'involvedObject.kind=Swarm' });
      const found = list.items.filter((e) => e.reason === 'InvalidSpec');
      return found.length ? found : undefined;
    });
    expect(events[0]).toMatchObject({ type: 'Warning' });
    expect((await getConfigMap()).metadata?.resourceVersion).toBe(rv);
  });

  it('the functions act under their own ServiceAccounts: RBAC denies what they were not granted', async () => {
    const assignKc = new KubeConfig();
    assignKc.loadFromFile(local.kubeconfigs.assign);
    await expect(assignKc.makeApiClient(CoreV1Api).listNamespacedSecret({ namespace: NS })).rejects.toMatchObject({ code: 403 });
    const restartKc = new KubeConfig();
    restartKc.loadFromFile(local.kubeconfigs.restart);
    await expect(restartKc.makeApiClient(AppsV1Api).deleteNamespacedStatefulSet({ namespace: NS, name: 'swarm-worker' })).rejects.toMatchObject({ code: 403 });
    await expect(apps.readNamespacedStatefulSet({ namespace: NS, name: 'swarm-worker' })).resolves.toBeTruthy();
  });

  it('deleting the Swarm stops managing it, and its ConfigMap is garbage-collected', async () => {
    await custom.deleteNamespacedCustomObject({ ...swarmPath, name: 'swarm-worker' });
    await eventually('the ConfigMap to be garbage-collected', async () => {
      try {
        await getConfigMap();
        return undefined;
      } catch (err) {
        return (err as { code?: number }).code === 404 ? true : undefined;
      }
    });
    const pods = await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=swarm-worker' });
    expect(pods.items.length).toBe(2); // the workers themselves are not ours to delete
  });
});
