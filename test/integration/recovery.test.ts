// Recovery on the real control plane (KWOK's fake pods: SWARM_REAL_NODE=0 is
// enough): a ConfigMap deleted or garbled by hand is recreated above the last
// version at once, through its own ApiServerSource event (the real adapter,
// watching the Swarms' ConfigMaps); and with no event at all, by the resync
// ping (the PingSource's local stand-in, through the local broker).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Swarm } from '../../lib/api/types.js';
import { readLastChange, readRestarts } from '../../lib/decisions/workspace.js';
import { parse } from '../../lib/workerconfig/index.js';
import { defaultWorkDir } from '../controlplane/cluster.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from '../harness/local-knative.js';
import { seedStreams } from '../support/fixtures.js';
import { Timeline, eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const custom = kc.makeApiClient(CustomObjectsApi);
const NS = `recovery-${process.pid}`;

const sts = `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: pool, namespace: ${NS}}
spec:
  serviceName: pool
  replicas: 2
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: pool}}
  template:
    metadata: {labels: {app: pool, k8slab.info/swarm: pool}}
    spec:
      # KWOK's tainted fake nodes: these pods run nothing.
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 0
      containers: [{name: worker, image: pool}]
`;
const swarm = `apiVersion: k8slab.info/v1alpha1
kind: Swarm
metadata: {name: pool, namespace: ${NS}}
spec:
  statefulSetName: pool
  configMapName: pool-config
  workload: {jobs: ${JSON.stringify(seedStreams)}}
`;

const getSwarm = async () => (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS, name: 'pool' })) as Swarm;
const readConfigMap = () => core.readNamespacedConfigMap({ namespace: NS, name: 'pool-config' }).catch(() => undefined);
const configVersion = async () => {
  const cm = await readConfigMap();
  try {
    return cm ? parse(cm.data?.['config.yml'] ?? '').version : undefined;
  } catch {
    return undefined;
  }
};
/** The Swarm converged on `version` or above: status and ConfigMap agree, every worker serving. */
const convergedAbove = (floor: number) =>
  eventually(`convergence above version ${floor}`, async () => {
    const st = (await getSwarm()).status;
    const v = await configVersion();
    return st?.phase === 'Running' && v !== undefined && v > floor && st.version === v ? v : undefined;
  }, 120_000);

let local: LocalKnative;
let timeline: Timeline;

beforeAll(async () => {
  await installSwarm(kubeconfig);
  await enableNamespace(kubeconfig, NS);
  timeline = await Timeline.start(kubeconfig, NS);
  local = await startLocalKnative({ adminKubeconfig: kubeconfig, namespace: NS, workDir: join(defaultWorkDir, 'e2e', NS), backoffScale: 0.2 });
});

afterAll(async () => {
  timeline?.stop();
  await local?.stop();
  await kubectl(kubeconfig, ['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

describe('a worker ConfigMap lost by hand', () => {
  it('deleted: its own delete event recreates it above the last version, every live worker restarted', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], sts);
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm);
    const first = await convergedAbove(0);
    const podsBefore = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=pool' })).items.map((p) => p.metadata?.uid);

    await kubectl(kubeconfig, ['-n', NS, 'delete', 'configmap', 'pool-config']);
    const recreated = await convergedAbove(first);
    expect(recreated).toBe(first + 1);
    // The write that recreated it pinned both live pods for a restart, and recorded when it was written.
    const write = timeline.configMapWrites.find((w) => w.name === 'pool-config' && parse(w.data['config.yml'] ?? '').version === recreated);
    expect(readRestarts(write?.annotations ?? {}).steps.map((s) => s.staleUid).sort()).toEqual([...podsBefore].sort());
    expect(readLastChange(write?.annotations ?? {})?.at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // ... and the restart function replaced them.
    const podsAfter = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=pool' })).items.map((p) => p.metadata?.uid);
    expect(podsAfter.filter((uid) => podsBefore.includes(uid))).toEqual([]);
  });

  it('garbled: its update event replaces it above the last version', async () => {
    const before = (await getSwarm()).status?.version ?? 0;
    await kubectl(kubeconfig, ['-n', NS, 'patch', 'configmap', 'pool-config', '--type', 'merge', '-p', JSON.stringify({ data: { 'config.yml': 'workloads: [unclosed' } })]);
    expect(await convergedAbove(before)).toBe(before + 1);
  });

  it('with no event at all (the source stopped): the resync ping recreates it', async () => {
    await local.adapter?.stop();
    const before = (await getSwarm()).status?.version ?? 0;
    await kubectl(kubeconfig, ['-n', NS, 'delete', 'configmap', 'pool-config']);
    expect(await readConfigMap()).toBeUndefined();
    local.resync.pingNow();
    // The ping recreates it; the restarts it records are driven by further pings, as the PingSource would every minute.
    const recreated = await eventually('recreated by the ping', async () => {
      const v = await configVersion();
      return v !== undefined && v > before ? v : undefined;
    }, 60_000);
    expect(recreated).toBe(before + 1);
    await eventually('converged through pings alone', async () => {
      local.resync.pingNow();
      await local.broker.idle();
      const st = (await getSwarm()).status;
      return st?.phase === 'Running' && st.version === recreated;
    }, 120_000, 1000);
    expect(local.broker.deadLetters).toEqual([]);
  });
});

describe('a rollout blocked past its deadline', () => {
  it('is Degraded/RolloutStuck naming the pod the scheduler refuses, with its message, once a ping comes after the deadline', async () => {
    // No node has this label: the scheduler leaves the pod Pending, Unschedulable.
    await kubectl(kubeconfig, ['apply', '-f', '-'], sts.replaceAll('pool', 'stuck').replace('replicas: 2', 'replicas: 1').replace('{type: kwok}', '{type: nowhere}'));
    await kubectl(
      kubeconfig,
      ['apply', '-f', '-'],
      swarm.replaceAll('pool', 'stuck').replace('  workload:', '  restart: {progressDeadlineSeconds: 1}\n  workload:'),
    );
    const get = async () => (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS, name: 'stuck' })) as Swarm;
    const degraded = await eventually('RolloutStuck', async () => {
      local.resync.pingNow();
      await local.broker.idle();
      const condition = (await get()).status?.conditions?.find((c) => c.type === 'Degraded');
      return condition?.reason === 'RolloutStuck' ? condition : undefined;
    }, 60_000, 1000);
    expect(degraded.status).toBe('True');
    expect(degraded.message).toMatch(/^rollout of version 1 blocked for more than 1s: stuck-0 pod is Pending: Unschedulable: 0\/\d+ nodes are available/);
    expect((await get()).status?.phase).toBe('Degraded');
  });
});
