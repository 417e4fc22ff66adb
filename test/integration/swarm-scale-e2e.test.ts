// Swarm owns the worker count, on the real control plane with KWOK pods (which
// run nothing: the test acknowledges for hot-reloading ones, kwok-acknowledger.ts;
// restart-only ones are Inferred), Swarm deployed on real
// Knative (its ApiServerSource, Broker and Triggers delivering to the
// swarm-assign and swarm-restart Services): `kubectl scale swm` grows the
// StatefulSet only after the config over the new count was written and
// shrinks it only after the survivors run their new shares (hot-reloading
// workers, MakeBeforeBreak); with restart policy Restart (which breaks first)
// it grows after the losers restarted and shrinks before the hand-off; a
// direct `kubectl scale sts` is undone; spec.ordinals.start is honoured;
// statefulSetName and configMapName cannot be changed; hot reload over pods
// that do not acknowledge is refused (AcknowledgementRequired).
// Order is judged by resourceVersion (etcd's revision, one sequence for every
// object), not by wall clocks.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Watch } from '@kubernetes/client-node';
import { SPEC_RULES } from '../../lib/api/schema.js';
import { parse, type WorkerConfig } from '../../lib/workerconfig/index.js';
import { apiClients, kwokStatefulSetYaml, servedNamespace, swarmYaml } from '../harness/cluster-fixtures.js';
import { acknowledgeKwokPools, type Acknowledger } from '../harness/kwok-acknowledger.js';
import { kubectl } from '../harness/swarm-install.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const NS = `scale-${process.pid}`;
const { kc, core, apps, readSwarm: getSwarm } = apiClients(kubeconfig, NS);
const served = servedNamespace(kubeconfig, NS, { beforeStart: record });
// The resync ping (the PingSource's, each minute in a deploy) every few seconds: on a cluster
// shared with other files the ApiServerSource adapter is rolled out whenever the set of
// enabled namespaces changes, and the ping reconciles the namespace meanwhile.
let pinging: { stop(): void } | undefined;
/** The hot-reloading pools' workers, played by the test (KWOK's pods run nothing). */
const HOT_RELOADING = ['pool', 'early', 'five'];
let acknowledger: Acknowledger | undefined;
beforeAll(() => {
  pinging = served.swarm.pinging(NS, 5_000);
  acknowledger = acknowledgeKwokPools(kubeconfig, NS, () => HOT_RELOADING);
});

/** Hot-reloading workers (policy None, MakeBeforeBreak), or restarted ones (`restarted`: policy Restart, which breaks first). */
const swarm = (name: string, replicas?: number, restarted = false) =>
  swarmYaml(NS, name, {
    ...(replicas === undefined ? {} : { replicas }),
    restart: restarted ? { policy: 'Restart', handoff: 'BreakBeforeMake' } : { policy: 'None', handoff: 'MakeBeforeBreak' },
    workload: { jobs: seedStreams },
  });

const configOf = async (name: string): Promise<WorkerConfig | undefined> => {
  const text = (await core.readNamespacedConfigMap({ namespace: NS, name: `${name}-config` })).data?.['config.yml'];
  return text ? parse(text) : undefined;
};
const replicasOf = async (name: string) => (await apps.readNamespacedStatefulSet({ namespace: NS, name })).spec?.replicas;
const converged = (name: string, workers: string[]) =>
  eventually(`${name} Running over ${workers.join(', ')}`, async () => {
    const s = await getSwarm(name);
    const st = s.status;
    const config = await configOf(name);
    return st?.phase === 'Running' &&
      st.observedGeneration === s.metadata.generation &&
      st.uncoveredJobs === 0 &&
      st.replicas === workers.length &&
      JSON.stringify(st.workers?.map((w) => w.name)) === JSON.stringify(workers) &&
      JSON.stringify(Object.keys(config?.workloads ?? {})) === JSON.stringify(workers)
      ? s
      : undefined;
  }, 120_000);

/** What happened, in the API server's own order (resourceVersion). */
interface Seen {
  rv: number;
  kind: 'StatefulSet' | 'Pod' | 'ConfigMap';
  name: string;
  uid: string;
  /** StatefulSet: spec.replicas; ConfigMap: its worker count and version; Pod: ready / deleting. */
  replicas?: number;
  workers?: number;
  version?: number;
  ready?: boolean;
  deleting?: boolean;
}
const seen: Seen[] = [];
const aborts: AbortController[] = [];

/** Watches the StatefulSets, pods and ConfigMaps of the namespace into `seen`. */
async function record(): Promise<void> {
  const watch = new Watch(kc);
  const noop = () => {};
  type Obj = {
    metadata: { name: string; uid: string; resourceVersion: string; deletionTimestamp?: unknown };
    spec?: { replicas?: number };
    status?: { conditions?: Array<{ type: string; status: string }> };
    data?: Record<string, string>;
  };
  const at = (o: Obj) => ({ rv: Number(o.metadata.resourceVersion), name: o.metadata.name, uid: o.metadata.uid });
  aborts.push(
    await watch.watch(`/apis/apps/v1/namespaces/${NS}/statefulsets`, {}, (_p, o: Obj) => {
      seen.push({ ...at(o), kind: 'StatefulSet', ...(o.spec?.replicas !== undefined ? { replicas: o.spec.replicas } : {}) });
    }, noop),
    await watch.watch(`/api/v1/namespaces/${NS}/pods`, {}, (phase, o: Obj) => {
      const ready = o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
      seen.push({ ...at(o), kind: 'Pod', ready, deleting: !!o.metadata.deletionTimestamp || phase === 'DELETED' });
    }, noop),
    await watch.watch(`/api/v1/namespaces/${NS}/configmaps`, {}, (_p, o: Obj) => {
      const text = o.data?.['config.yml'];
      if (!text || text.trim() === '{}') return;
      let config: WorkerConfig;
      try {
        config = parse(text);
      } catch {
        return;
      }
      seen.push({ ...at(o), kind: 'ConfigMap', workers: Object.keys(config.workloads).length, version: config.version });
    }, noop),
  );
}
/** The resourceVersion at which `match` was first seen. */
const firstRv = (match: (s: Seen) => boolean): number => {
  const hit = [...seen].sort((a, b) => a.rv - b.rv).find(match);
  if (!hit) throw new Error('not seen');
  return hit.rv;
};

afterAll(async () => {
  pinging?.stop();
  aborts.forEach((a) => a.abort());
  await acknowledger?.stop();
});

describe('Swarm owns the worker count (spec.replicas, the scale subresource)', () => {
  it('kubectl scale swm grows the StatefulSet after the config over the new count was written, and shrinks it after the survivors took over', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'pool', 2, undefined, true));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm('pool', 2));
    await converged('pool', ['pool-0', 'pool-1']);
    // The scale subresource answers from status: the pods that exist, and their selector (HPA, KEDA).
    const scale = JSON.parse(await kubectl(kubeconfig, ['get', '--raw', `/apis/k8slab.info/v1alpha1/namespaces/${NS}/swarms/pool/scale`])) as {
      spec: { replicas: number };
      status: { replicas: number; selector: string };
    };
    expect(scale).toMatchObject({ spec: { replicas: 2 }, status: { replicas: 2, selector: 'app=pool' } });

    // Up: 2 → 3.
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/pool', '--replicas', '3']);
    await converged('pool', ['pool-0', 'pool-1', 'pool-2']);
    const configOver3 = firstRv((s) => s.kind === 'ConfigMap' && s.name === 'pool-config' && s.workers === 3);
    const grownTo3 = firstRv((s) => s.kind === 'StatefulSet' && s.name === 'pool' && s.replicas === 3);
    const pod2 = firstRv((s) => s.kind === 'Pod' && s.name === 'pool-2');
    expect(configOver3).toBeLessThan(grownTo3);
    expect(grownTo3).toBeLessThan(pod2);

    // Down: 3 → 1 (MakeBeforeBreak): pool-0 is given every job while pool-1 and pool-2 still
    // publish theirs (releasing); once pool-0 serves and acknowledges that share (the test's
    // acknowledger, for KWOK's pods) they are released, the config is over 1, and only then does the StatefulSet shrink.
    const before0 = (await core.readNamespacedPod({ namespace: NS, name: 'pool-0' })).metadata?.uid;
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/pool', '--replicas', '1']);
    const done = await converged('pool', ['pool-0']);
    expect(done.status?.workers?.[0]).toMatchObject({ name: 'pool-0', jobs: seedStreams.length, coverage: 'Acknowledged' });
    expect(await replicasOf('pool')).toBe(1);
    const configOver1 = firstRv((s) => s.kind === 'ConfigMap' && s.name === 'pool-config' && s.workers === 1);
    const shrunkTo1 = firstRv((s) => s.kind === 'StatefulSet' && s.name === 'pool' && s.replicas === 1);
    const departing = firstRv((s) => s.kind === 'Pod' && (s.name === 'pool-1' || s.name === 'pool-2') && s.rv > configOver1 && !!s.deleting);
    // Hot-reloading: pool-0 was never restarted.
    expect(seen.some((s) => s.kind === 'Pod' && s.uid === before0 && !!s.deleting)).toBe(false);
    expect(configOver1).toBeLessThan(shrunkTo1);
    expect(shrunkTo1).toBeLessThan(departing);
    // Nothing about this namespace exhausted its retries (the dead-letter Service's log,
    // which other files' events share: only this namespace's are asked about).
    expect(await served.swarm.deadLetters(NS)).toEqual([]);
  });

  it('a Swarm applied before its StatefulSet: its config over spec.replicas is written first, so every pod is created with its share there', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm('early', 2));
    const waiting = await eventually('the config written ahead', async () => {
      const s = await getSwarm('early');
      return s.status?.conditions?.some((c) => c.type === 'Ready' && c.reason === 'StatefulSetNotFound') && s.status.version === 1 ? s : undefined;
    });
    expect(waiting.status?.phase).toBe('Pending');
    expect(Object.keys((await configOf('early'))?.workloads ?? {})).toEqual(['early-0', 'early-1']);
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'early', 2, undefined, true));
    await converged('early', ['early-0', 'early-1']);
    const written = firstRv((s) => s.kind === 'ConfigMap' && s.name === 'early-config');
    expect(written).toBeLessThan(firstRv((s) => s.kind === 'StatefulSet' && s.name === 'early'));
    // Found in force: no new version.
    expect(new Set(seen.filter((s) => s.kind === 'ConfigMap' && s.name === 'early-config').map((s) => s.version))).toEqual(new Set([1]));
  });

  it('a direct kubectl scale sts is undone: spec.replicas wins', async () => {
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/pool', '--replicas', '3']);
    await eventually('the StatefulSet back at 1', async () => (await replicasOf('pool')) === 1 && seen.some((s) => s.kind === 'StatefulSet' && s.name === 'pool' && s.replicas === 3));
    await converged('pool', ['pool-0']);
  });
});

describe('restart policy Restart: restarts break first (at most once)', () => {
  it('grows after the losers have restarted, and shrinks before anyone takes over the departing workers\' jobs', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'once', 2));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm('once', 2, true));
    await converged('once', ['once-0', 'once-1']);
    const before = await Promise.all(['once-0', 'once-1'].map(async (name) => (await core.readNamespacedPod({ namespace: NS, name })).metadata?.uid));

    await kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/once', '--replicas', '3']);
    await converged('once', ['once-0', 'once-1', 'once-2']);
    const configOver3 = firstRv((s) => s.kind === 'ConfigMap' && s.name === 'once-config' && s.workers === 3);
    const losersStopped = Math.max(...before.map((uid) => firstRv((s) => s.kind === 'Pod' && s.uid === uid && !!s.deleting)));
    const grownTo3 = firstRv((s) => s.kind === 'StatefulSet' && s.name === 'once' && s.replicas === 3);
    expect(configOver3).toBeLessThan(losersStopped);
    expect(losersStopped).toBeLessThan(grownTo3);

    await kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/once', '--replicas', '2']);
    await converged('once', ['once-0', 'once-1']);
    const shrunkTo2 = firstRv((s) => s.kind === 'StatefulSet' && s.name === 'once' && s.replicas === 2);
    const departed = firstRv((s) => s.kind === 'Pod' && s.name === 'once-2' && s.rv > shrunkTo2 && !!s.deleting);
    const configOver2 = firstRv((s) => s.kind === 'ConfigMap' && s.name === 'once-config' && s.workers === 2 && s.rv > grownTo3);
    expect(shrunkTo2).toBeLessThan(departed);
    expect(departed).toBeLessThan(configOver2);
  });
});

describe('hot reload needs acknowledgement (POOL_RULES hotReloadAcknowledges)', () => {
  it('over pods that do not declare it, a Swarm is refused (AcknowledgementRequired, Degraded, a Warning Event, no ConfigMap); as restart-only workers they are served, Inferred', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'silent', 1));
    // Break-before-make from the start: the handoff is immutable, and policy Restart (below) needs it.
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(NS, 'silent', { restart: { policy: 'None', handoff: 'BreakBeforeMake' }, workload: { jobs: seedStreams } }));
    const refused = await eventually('refused', async () => {
      const s = await getSwarm('silent');
      return s.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'False' && c.reason === 'AcknowledgementRequired') ? s : undefined;
    });
    expect(refused.status?.phase).toBe('Degraded');
    expect(refused.status?.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/k8slab.info\/acknowledges: lease/);
    const events = await core.listNamespacedEvent({ namespace: NS, fieldSelector: 'involvedObject.name=silent' });
    expect(events.items.some((e) => e.type === 'Warning' && e.reason === 'AcknowledgementRequired')).toBe(true);
    await expect(configOf('silent')).rejects.toThrow();
    // Restart-only workers need no acknowledgement: Swarm observes their pods' lifecycle.
    await kubectl(kubeconfig, ['-n', NS, 'patch', 'swm', 'silent', '--type', 'merge', '-p', JSON.stringify({ spec: { restart: { policy: 'Restart' } } })]);
    const served = await converged('silent', ['silent-0']);
    expect(served.status?.workers?.[0]).toMatchObject({ name: 'silent-0', coverage: 'Inferred' });
  });
});

describe("the StatefulSet's start ordinal", () => {
  it('shares, status and resizes name the pods that exist (ordinals.start: 5)', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'five', 2, 5, true));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm('five'));
    await converged('five', ['five-5', 'five-6']);
    // Without spec.replicas the StatefulSet's own count is followed.
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/five', '--replicas', '3']);
    const s = await converged('five', ['five-5', 'five-6', 'five-7']);
    expect(s.status?.workers?.map((w) => w.jobs)).toEqual([9, 9, 9]);
    // With it, Swarm resizes, still from ordinal 5.
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'swm/five', '--replicas', '2']);
    await converged('five', ['five-5', 'five-6']);
    expect(await replicasOf('five')).toBe(2);
  });
});

describe('immutable references (CEL self == oldSelf)', () => {
  // What a user is told (lib/api/schema.ts puts these messages in the CRD).
  const IMMUTABLE_MESSAGES = {
    statefulSetName: 'statefulSetName is immutable: create a new Swarm to manage another StatefulSet',
    configMapName: 'configMapName is immutable: create a new Swarm to publish to another ConfigMap',
    deploymentName: 'deploymentName is immutable: create a new Swarm to manage another Deployment',
    handoff: 'restart.handoff is immutable',
  };
  it('the API server refuses a change of statefulSetName, configMapName or restart.handoff, with a message saying so', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'fixed', 0, undefined, true));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm('fixed'));
    for (const field of ['statefulSetName', 'configMapName'] as const) {
      const message = IMMUTABLE_MESSAGES[field];
      const patch = JSON.stringify({ spec: { [field]: 'renamed' } });
      await expect(kubectl(kubeconfig, ['-n', NS, 'patch', 'swm', 'fixed', '--type', 'merge', '-p', patch])).rejects.toThrow(message);
    }
    // The handoff too: no promise holds through a switch mid hand-off (docs/design.md).
    const switched = JSON.stringify({ spec: { restart: { handoff: 'BreakBeforeMake' } } });
    await expect(kubectl(kubeconfig, ['-n', NS, 'patch', 'swm', 'fixed', '--type', 'merge', '-p', switched])).rejects.toThrow(IMMUTABLE_MESSAGES.handoff);
    const kept = await getSwarm('fixed');
    expect(kept.spec).toMatchObject({ statefulSetName: 'fixed', configMapName: 'fixed-config' });
    // Everything else stays editable.
    await kubectl(kubeconfig, ['-n', NS, 'patch', 'swm', 'fixed', '--type', 'merge', '-p', '{"spec":{"replicas":0}}']);
    expect((await getSwarm('fixed')).spec.replicas).toBe(0);
  });

  it('deploymentName: immutable, exclusive with statefulSetName, and a Deployment pool hot-reloads (restart.policy None)', async () => {
    const pooled = (name: string, spec: Record<string, unknown>) =>
      swarmYaml(NS, name, { statefulSetName: undefined, deploymentName: name, restart: { policy: 'None' }, workload: { jobs: seedStreams }, ...spec });
    await kubectl(kubeconfig, ['apply', '-f', '-'], pooled('pooled', {}));
    const patch = (p: unknown) => kubectl(kubeconfig, ['-n', NS, 'patch', 'swm', 'pooled', '--type', 'merge', '-p', JSON.stringify(p)]);
    await expect(patch({ spec: { deploymentName: 'renamed' } })).rejects.toThrow(IMMUTABLE_MESSAGES.deploymentName);
    await expect(patch({ spec: { deploymentName: null, statefulSetName: 'pooled' } })).rejects.toThrow(SPEC_RULES.poolKindImmutable.message);
    await expect(patch({ spec: { statefulSetName: 'pooled' } })).rejects.toThrow(SPEC_RULES.onePool.message);
    await expect(patch({ spec: { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } })).rejects.toThrow(SPEC_RULES.deploymentHotReloads.message);
    await expect(kubectl(kubeconfig, ['apply', '-f', '-'], pooled('restarting', { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } }))).rejects.toThrow(SPEC_RULES.deploymentHotReloads.message);
    await expect(kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(NS, 'neither', { statefulSetName: undefined, workload: { jobs: [] } }))).rejects.toThrow(SPEC_RULES.onePool.message);
    // The StatefulSet Swarm cannot become a Deployment one either.
    await expect(kubectl(kubeconfig, ['-n', NS, 'patch', 'swm', 'fixed', '--type', 'merge', '-p', '{"spec":{"deploymentName":"fixed"}}'])).rejects.toThrow(SPEC_RULES.onePool.message);
  });
});

describe('restart policy Restart breaks first (CEL restartBreaksFirst)', () => {
  it('with MakeBeforeBreak the API server refuses it, saying why; with BreakBeforeMake it is accepted', async () => {
    const restarting = (handoff: string) => swarmYaml(NS, 'restarting-sts', { restart: { policy: 'Restart', handoff }, workload: { jobs: [] } });
    await expect(kubectl(kubeconfig, ['apply', '-f', '-', '--dry-run=server'], restarting('MakeBeforeBreak'))).rejects.toThrow(SPEC_RULES.restartBreaksFirst.message);
    await expect(kubectl(kubeconfig, ['apply', '-f', '-', '--dry-run=server'], restarting('BreakBeforeMake'))).resolves.toBeTruthy();
  });
});
