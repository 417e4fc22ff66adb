// Recovery, with Swarm on real Knative and KWOK's fake worker pods: a
// ConfigMap deleted or garbled by hand is recreated above the last version at
// once, through its own ApiServerSource event (the source watches the Swarms'
// ConfigMaps); and with no event at all (the namespace no longer selected by
// the source), by the resync ping: the event its PingSource sends every five minutes,
// posted to the Broker by the test at once.
import { describe, expect, inject, it } from 'vitest';
import { readLastChange, readRestarts } from '../../lib/decisions/workspace.js';
import { parse } from '../../lib/workerconfig/index.js';
import { apiClients, kwokStatefulSetYaml, servedNamespace, swarmYaml } from '../harness/cluster-fixtures.js';
import { kubectl } from '../harness/swarm-install.js';
import { serveNamespace, untilSourceWatches } from '../harness/swarm-on-knative.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const NS = `recovery-${process.pid}`;
const { core, readSwarm } = apiClients(kubeconfig, NS);
const realNode = inject('realNode');
const served = servedNamespace(kubeconfig, NS);

const sts = kwokStatefulSetYaml(NS, 'pool', 2);
// Workers restarted to load their share (policy Restart, which breaks first): a lost config restarts every live one.
const swarm = swarmYaml(NS, 'pool', { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' }, workload: { jobs: seedStreams } });

const getSwarm = () => readSwarm('pool');
const readConfigMap = () => core.readNamespacedConfigMap({ namespace: NS, name: 'pool-config' }).catch(() => undefined);
/** The version of a config.yml; undefined when there is none or it does not parse (garbled). */
const versionIn = (text: string | undefined): number | undefined => {
  try {
    return text === undefined ? undefined : parse(text).version;
  } catch {
    return undefined;
  }
};
const configVersion = async () => {
  const cm = await readConfigMap();
  return cm ? versionIn(cm.data?.['config.yml'] ?? '') : undefined;
};
/** The Swarm converged on `version` or above: status and ConfigMap agree, every worker serving. */
const convergedAbove = (floor: number) =>
  eventually(`convergence above version ${floor}`, async () => {
    const st = (await getSwarm()).status;
    const v = await configVersion();
    return st?.phase === 'Running' && v !== undefined && v > floor && st.version === v ? v : undefined;
  }, 120_000);

describe.skipIf(!realNode)('a worker ConfigMap lost by hand', () => {
  it('deleted: its own delete event recreates it above the last version, every live worker restarted', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], sts);
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm);
    const first = await convergedAbove(0);
    const podsBefore = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=pool' })).items.map((p) => p.metadata?.uid);

    await kubectl(kubeconfig, ['-n', NS, 'delete', 'configmap', 'pool-config']);
    // Recreated at the last version + 1 (break-before-make: every job awaiting until the pods
    // restarted, then published, so convergence may take one more version).
    expect(await convergedAbove(first)).toBeGreaterThan(first);
    const recreated = first + 1;
    // The write that recreated it pinned both live pods for a restart, and recorded when it was written.
    const write = served.timeline.configMapWrites.find((w) => w.name === 'pool-config' && parse(w.data['config.yml'] ?? '').version === recreated);
    expect(readRestarts(write?.annotations ?? {}).steps.map((s) => s.staleUid).sort()).toEqual([...podsBefore].sort());
    expect(readLastChange(write?.annotations ?? {})?.at).toMatch(/^\d{4}-\d\d-\d\dT/);
    // ... and the restart function replaced them.
    const podsAfter = (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=pool' })).items.map((p) => p.metadata?.uid);
    expect(podsAfter.filter((uid) => podsBefore.includes(uid))).toEqual([]);
  });

  it('garbled: its update event replaces it above the last version', async () => {
    const before = (await getSwarm()).status?.version ?? 0;
    await kubectl(kubeconfig, ['-n', NS, 'patch', 'configmap', 'pool-config', '--type', 'merge', '-p', JSON.stringify({ data: { 'config.yml': 'workloads: [unclosed' } })]);
    expect(await convergedAbove(before)).toBeGreaterThan(before);
    // Replaced at the last version + 1, never below.
    const written = served.timeline.configMapWrites.filter((w) => w.name === 'pool-config').map((w) => versionIn(w.data['config.yml']));
    expect(written).toContain(before + 1);
  });

  it('with no event at all (the source no longer watching): the resync ping recreates it', async () => {
    // The source watches the namespaces labelled for Swarm: without the label its adapter is
    // rolled out without this one (the functions' RoleBindings stay), and then no event comes from here.
    await kubectl(kubeconfig, ['label', 'namespace', NS, 'k8slab.info/swarm-enabled-']);
    await untilSourceWatches(kubeconfig, NS, false);
    const before = (await getSwarm()).status?.version ?? 0;
    await kubectl(kubeconfig, ['-n', NS, 'delete', 'configmap', 'pool-config']);
    expect(await readConfigMap()).toBeUndefined();
    await served.swarm.pingNow(NS);
    // The ping recreates it; the restarts it records are driven by further pings, as the PingSource would every five minutes.
    const recreated = await eventually('recreated by the ping', async () => {
      const v = await configVersion();
      return v !== undefined && v > before ? v : undefined;
    }, 60_000);
    expect(recreated).toBeGreaterThan(before);
    await eventually('converged through pings alone', async () => {
      await served.swarm.pingNow(NS);
      const st = (await getSwarm()).status;
      return st?.phase === 'Running' && st.version !== undefined && st.version >= recreated && st.version === (await configVersion());
    }, 120_000, 2000);
    expect(await served.swarm.deadLetters(NS)).toEqual([]);
    await serveNamespace(kubeconfig, NS);
  });
});

describe.skipIf(!realNode)('a rollout blocked past its deadline', () => {
  it('is Degraded/RolloutStuck naming the pod the scheduler refuses, with its message, once a ping comes after the deadline', async () => {
    // No node has this label: the scheduler leaves the pod Pending, Unschedulable.
    // Hot reload (the default policy) needs a template that declares acknowledgement; this pod never starts anyway.
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'stuck', 1, undefined, true).replace('{type: kwok}', '{type: nowhere}'));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(NS, 'stuck', { restart: { progressDeadlineSeconds: 1 }, workload: { jobs: seedStreams } }));
    const get = () => readSwarm('stuck');
    const degraded = await eventually('RolloutStuck', async () => {
      await served.swarm.pingNow(NS);
      const condition = (await get()).status?.conditions?.find((c) => c.type === 'Degraded');
      return condition?.reason === 'RolloutStuck' ? condition : undefined;
    }, 60_000, 1000);
    expect(degraded.status).toBe('True');
    expect(degraded.message).toMatch(/^rollout of version 1 blocked for more than 1s: stuck-0 pod is Pending: Unschedulable: 0\/\d+ nodes are available/);
    expect((await get()).status?.phase).toBe('Degraded');
  });
});
