// assign's memory of settled looks (lib/reconcilers/settled.ts): an event
// announcing a version that the last settled look of its Swarm read costs no
// request until that look's deadline; any other version, a deletion, a copy
// without a version, or a Swarm whose last look wrote is read as before.
import { describe, expect, it } from 'vitest';
import { assignFunction } from '../../functions/assign/index.js';
import { restartFunction } from '../../functions/restart/index.js';
import type { Swarm } from '../../lib/api/types.js';
import type { Trigger } from '../../lib/events/types.js';
import { createCoalescer } from '../../lib/reconcilers/coalesce.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import type { Observation } from '../../lib/reconcilers/observe.js';
import { settledLooks } from '../../lib/reconcilers/settled.js';
import { silentLog, swarmOf } from '../support/fixtures.js';
import { MemoryKube } from '../support/memory-kube.js';

const FIVE = ['getConfigMap', 'getStatefulSet', 'listLeases', 'listPods', 'listSwarmsNaming'];
/** A Pod event's glance (glance.ts): the Swarms naming the pool, the ConfigMap, the pods. */
const GLANCE = ['getConfigMap', 'listPods', 'listSwarmsNaming'];
const base = { source: 'apiserver', verb: 'update', mode: 'resource', namespace: 'ns' } as const;

/** Events announcing the objects as they stand now, versions included. */
function eventsOf(kube: MemoryKube) {
  const pod = (name: string) => kube.pods.get(`ns/${name}`)!;
  return {
    swarm: (): Trigger => ({
      ...base,
      kind: 'Swarm',
      apiVersion: 'k8slab.info/v1alpha1',
      name: 'swarm',
      statefulSetName: 'swarm-worker',
      resourceVersion: kube.swarms.get('ns/swarm')!.metadata.resourceVersion!,
    }),
    statefulSet: async (): Promise<Trigger> => ({
      ...base,
      kind: 'StatefulSet',
      apiVersion: 'apps/v1',
      name: 'swarm-worker',
      resourceVersion: (await kube.getStatefulSet('ns', 'swarm-worker'))!.resourceVersion!,
    }),
    pod: (name = 'swarm-worker-1'): Trigger => ({ ...base, kind: 'Pod', apiVersion: 'v1', name, ownerStatefulSet: 'swarm-worker', resourceVersion: pod(name).resourceVersion }),
    configMap: (): Trigger => ({
      ...base,
      kind: 'ConfigMap',
      apiVersion: 'v1',
      name: 'swarm-worker-config',
      swarm: 'swarm',
      resourceVersion: kube.configMaps.get('ns/swarm-worker-config')!.resourceVersion!,
    }),
  };
}

/** A converged Swarm of 3 workers, reconciled by an assign that remembers settled looks (and by restart). */
async function settledWorld() {
  const kube = new MemoryKube();
  kube.addSwarm(swarmOf({ jobs: ['a', 'b', 'c', 'd', 'e'] }));
  kube.setStatefulSet('ns', 'swarm-worker', 3);
  for (let i = 0; i < 3; i++) kube.startPod('ns', 'swarm-worker', i);
  const clock = { now: new Date('2026-11-22T00:00:00Z') };
  const env: ReconcileEnv = { kube, now: () => clock.now, component: 'test', log: silentLog, settled: settledLooks() };
  const assign = assignFunction(env, createCoalescer());
  const restart = restartFunction(env, createCoalescer());
  const events = eventsOf(kube);
  const changed: Trigger = { source: 'swarm', type: 'assignment.changed', namespace: 'ns', name: 'swarm', uid: 'u', version: 1, workers: [] };
  for (let i = 0; i < 2; i++) {
    await assign.handle(events.swarm());
    await restart.handle(changed);
  }
  // One more look at rest: the record holds what it read.
  await assign.handle(await events.statefulSet());
  expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running' });
  kube.calls = [];
  kube.writes = [];
  return { kube, assign, events, env, clock };
}

describe('an event announcing a version the last settled look read', () => {
  it.each(['swarm', 'statefulSet', 'pod', 'configMap'] as const)('(%s) is answered without a request', async (which) => {
    const { kube, assign, events } = await settledWorld();
    const trigger = await events[which]();
    kube.calls = [];
    const response = await assign.handle(trigger);
    expect(kube.calls).toEqual([]);
    expect(response.summary).toMatchObject({ swarms: [], settled: true });
  });

  it('is read when its version is another, it is a deletion, or it carries no version (a glance: its own object, not all five)', async () => {
    const { kube, assign, events } = await settledWorld();
    const { resourceVersion: _rv, ...unversioned } = events.pod() as Extract<Trigger, { source: 'apiserver' }>;
    for (const trigger of [{ ...events.pod(), resourceVersion: 'elsewhere' }, { ...events.pod(), verb: 'delete' as const }, unversioned]) {
      kube.calls = [];
      await assign.handle(trigger);
      expect([...kube.calls].sort()).toEqual(GLANCE);
    }
    expect(kube.writes).toEqual([]);
  });

  it('a change is read (its version is new); the record then holds what the look after its write read', async () => {
    const { kube, assign, events } = await settledWorld();
    const before = events.pod('swarm-worker-1');
    kube.calls = [];
    kube.setReady('ns', 'swarm-worker-1', false);
    await assign.handle(events.pod());
    expect(kube.calls.filter((c) => c === 'replaceSwarmStatus')).toHaveLength(1);
    expect(kube.swarms.get('ns/swarm')!.status?.phase).not.toBe('Running');
    // The version before the change is no longer the one recorded (a glance reads the pods: as status recorded them); the one after it is.
    kube.calls = [];
    await assign.handle(before);
    expect([...kube.calls].sort()).toEqual(GLANCE);
    kube.calls = [];
    await assign.handle(events.pod());
    expect(kube.calls).toEqual([]);
  });

  it('a look waiting on a rollout holds only until its progress deadline: then the same version is read, and the rollout reported stuck', async () => {
    const { kube, assign, events, clock } = await settledWorld();
    kube.updateSwarmSpec('ns', 'swarm', (s) => (s.spec.restart = { progressDeadlineSeconds: 60 }));
    await assign.handle(events.swarm());
    kube.setReady('ns', 'swarm-worker-1', false);
    await assign.handle(events.pod());
    expect(kube.swarms.get('ns/swarm')!.status?.phase).not.toBe('Degraded');
    kube.calls = [];
    clock.now = new Date('2026-11-22T00:00:59Z');
    await assign.handle(events.pod());
    expect(kube.calls).toEqual([]);
    clock.now = new Date('2026-11-22T00:01:01Z');
    await assign.handle(events.pod());
    expect(kube.calls).toEqual(expect.arrayContaining(FIVE));
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Degraded', conditions: expect.arrayContaining([expect.objectContaining({ reason: 'RolloutStuck' })]) });
  });

  it('a copy that looks like the one read, after a change another instance reconciled, is read (versions, not contents)', async () => {
    const { kube, assign, events } = await settledWorld();
    // Another assign instance (no shared memory) reconciles the pod going unready.
    const other = assignFunction({ kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog, settled: settledLooks() }, createCoalescer());
    kube.setReady('ns', 'swarm-worker-1', false);
    await other.handle(events.pod());
    expect(kube.swarms.get('ns/swarm')!.status?.phase).not.toBe('Running');
    // Ready again: the same contents as the first instance read, under a new version.
    kube.setReady('ns', 'swarm-worker-1', true);
    kube.calls = [];
    await assign.handle(events.pod());
    expect(kube.calls).toEqual(expect.arrayContaining(FIVE));
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', readyReplicas: 3 });
  });

  it('nor while restarts are recorded (restart policy Restart): each reconcile tells restart again', async () => {
    const { kube, assign, events } = await settledWorld();
    kube.updateSwarmSpec('ns', 'swarm', (s) => (s.spec.restart = { policy: 'Restart', handoff: 'BreakBeforeMake' }));
    kube.setStatefulSet('ns', 'swarm-worker', 4);
    kube.startPod('ns', 'swarm-worker', 3, false);
    await assign.handle(events.swarm());
    const duplicate = await events.statefulSet();
    for (let i = 0; i < 2; i++) {
      kube.calls = [];
      const answer = await assign.handle(duplicate);
      // Not answered from the record: read (a glance at the StatefulSet, glance.ts), and restart told.
      expect([...kube.calls].sort()).toEqual(['getConfigMap', 'getStatefulSet', 'listSwarmsNaming']);
      expect(answer.reply?.type).toBe('info.k8slab.swarm.assignment.changed');
    }
  });

  it('a glance by an instance that remembers nothing vouches for the versions it read', async () => {
    const { kube, events } = await settledWorld();
    const other = assignFunction({ kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog, settled: settledLooks() }, createCoalescer());
    const pod = events.pod();
    await other.handle(pod);
    expect([...kube.calls].sort()).toEqual(GLANCE);
    kube.calls = [];
    expect((await other.handle(pod)).summary).toMatchObject({ settled: true });
    expect(kube.calls).toEqual([]);
  });

  it('the resync ping is never answered from it', async () => {
    const { kube, assign } = await settledWorld();
    await assign.handle({ source: 'ping', namespace: 'ns' } as Trigger);
    expect(kube.calls).toEqual(expect.arrayContaining(FIVE));
  });
});

describe('settledLooks', () => {
  const observation = (name: string, pool: string): Observation => ({
    swarm: { ...swarmOf({ statefulSetName: pool }, name), metadata: { name, namespace: 'ns', resourceVersion: `swarm-${name}` } } as Swarm,
    statefulSet: { kind: 'StatefulSet', name: pool, namespace: 'ns', uid: pool, resourceVersion: `sts-${pool}`, replicas: 1, labelSelector: `app=${pool}` },
    workers: { pods: [], leases: [{ name: `${pool}-0`, namespace: 'ns', resourceVersion: `lease-${pool}`, labels: {}, annotations: {} }] },
  });
  const stsEvent = (pool: string, resourceVersion = `sts-${pool}`): Trigger => ({ ...base, kind: 'StatefulSet', apiVersion: 'apps/v1', name: pool, resourceVersion });

  it('remembers a bounded number of Swarms, the oldest dropped first', () => {
    const looks = settledLooks(2);
    for (const i of [1, 2, 3]) looks.remember({ namespace: 'ns', name: `s${i}` }, observation(`s${i}`, `p${i}`));
    expect([1, 2, 3].map((i) => looks.vouches(stsEvent(`p${i}`), 0))).toEqual([false, true, true]);
    expect(looks.vouches({ ...base, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: 'p3-0', resourceVersion: 'lease-p3' }, 0)).toBe(true);
  });

  it('forgets a Swarm with its pool, and a Swarm that moved to another pool no longer answers for the old one', () => {
    const looks = settledLooks();
    const key = { namespace: 'ns', name: 's' };
    looks.remember(key, observation('s', 'p'));
    looks.remember(key, observation('s', 'q'));
    expect([looks.vouches(stsEvent('p'), 0), looks.vouches(stsEvent('q'), 0)]).toEqual([false, true]);
    looks.forget(key);
    expect(looks.vouches(stsEvent('q'), 0)).toBe(false);
  });

  it('a glance that found nothing to do adds the versions it read, holding to the deadline of the status it found in force', () => {
    const looks = settledLooks();
    const key = { namespace: 'ns', name: 's' };
    const at = (iso: string) => Date.parse(iso);
    looks.remember(key, observation('s', 'p'), '2026-11-22T00:10:00Z');
    looks.note(key, { kind: 'StatefulSet', name: 'p' }, new Map([['StatefulSet/p', 'sts-p-2']]), '2026-11-22T00:05:00Z');
    expect(looks.vouches(stsEvent('p', 'sts-p-2'), at('2026-11-22T00:04:59Z'))).toBe(true);
    expect(looks.vouches({ ...base, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: 'p-0', resourceVersion: 'lease-p' }, at('2026-11-22T00:04:59Z'))).toBe(true);
    expect(looks.vouches(stsEvent('p', 'sts-p-2'), at('2026-11-22T00:05:00Z'))).toBe(false);
    // A record whose deadline passed, then a glance at a status with none (the rollout moved on): it holds again.
    looks.note(key, { kind: 'StatefulSet', name: 'p' }, new Map([['StatefulSet/p', 'sts-p-3']]));
    expect(looks.vouches(stsEvent('p', 'sts-p-3'), at('2026-11-22T01:00:00Z'))).toBe(true);
    // No record yet: one is started with what the glance read.
    looks.note({ namespace: 'ns', name: 't' }, { kind: 'StatefulSet', name: 'q' }, new Map([['StatefulSet/q', 'sts-q']]));
    expect(looks.vouches(stsEvent('q'), 0)).toBe(true);
  });

  it('a look without versions (views built by hand) is not remembered', () => {
    const looks = settledLooks();
    const { resourceVersion: _rv, ...pool } = observation('s', 'p').statefulSet!;
    looks.remember({ namespace: 'ns', name: 's' }, { ...observation('s', 'p'), statefulSet: pool });
    expect(looks.vouches(stsEvent('p'), 0)).toBe(false);
  });
});
