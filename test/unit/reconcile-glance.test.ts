// assign's glance (lib/reconcilers/glance.ts): status records digests of what
// it was judged from (status.observed); an event whose own object digests as
// recorded is answered after three reads, anything else is looked at whole.
// No instance memory: a fresh instance glances alike.
import { describe, expect, it } from 'vitest';
import { assignFunction } from '../../functions/assign/index.js';
import { restartFunction } from '../../functions/restart/index.js';
import type { Trigger } from '../../lib/events/types.js';
import { configMapDigest, podsDigest, poolDigest } from '../../lib/decisions/observed.js';
import { createCoalescer } from '../../lib/reconcilers/coalesce.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import type { PodView } from '../../lib/kube/types.js';
import { silentLog, swarmOf } from '../support/fixtures.js';
import { MemoryKube } from '../support/memory-kube.js';

const base = { source: 'apiserver', verb: 'update', mode: 'resource', namespace: 'ns' } as const;
const swarmEvent: Trigger = { ...base, kind: 'Swarm', apiVersion: 'k8slab.info/v1alpha1', name: 'swarm', statefulSetName: 'swarm-worker' };
const statefulSetEvent: Trigger = { ...base, kind: 'StatefulSet', apiVersion: 'apps/v1', name: 'swarm-worker' };
const podEvent: Trigger = { ...base, kind: 'Pod', apiVersion: 'v1', name: 'swarm-worker-1', ownerStatefulSet: 'swarm-worker' };
const configMapEvent: Trigger = { ...base, kind: 'ConfigMap', apiVersion: 'v1', name: 'swarm-worker-config', swarm: 'swarm' };
const changedEvent: Trigger = { source: 'swarm', type: 'assignment.changed', namespace: 'ns', name: 'swarm', uid: 'u', version: 1, workers: [] };
const FIVE = ['getConfigMap', 'getStatefulSet', 'listLeases', 'listPods', 'listSwarmsNaming'];

async function converged(restart: 'None' | 'Restart' = 'None') {
  const kube = new MemoryKube();
  kube.addSwarm(swarmOf({ jobs: ['a', 'b', 'c', 'd', 'e'], restart: { policy: restart, handoff: restart === 'Restart' ? 'BreakBeforeMake' : 'MakeBeforeBreak' } }));
  kube.setStatefulSet('ns', 'swarm-worker', 3);
  for (let i = 0; i < 3; i++) kube.startPod('ns', 'swarm-worker', i);
  const clock = { now: new Date('2026-11-22T00:00:00Z') };
  const env: ReconcileEnv = { kube, now: () => clock.now, component: 'test', log: silentLog };
  const assign = assignFunction(env, createCoalescer());
  const restarter = restartFunction(env, createCoalescer());
  for (let i = 0; i < 2; i++) {
    await assign.handle(swarmEvent);
    await restarter.handle(changedEvent);
  }
  kube.calls = [];
  kube.writes = [];
  return { kube, assign, restarter, clock, status: () => kube.swarms.get('ns/swarm')!.status! };
}

describe('status.observed', () => {
  it('records the digests of the pool, pods, Leases and ConfigMap the status was judged from', async () => {
    const { kube, status } = await converged();
    const pods = [...kube.pods.values()].filter((p) => p.name.startsWith('swarm-worker-'));
    expect(status().observed).toEqual({
      pool: poolDigest((await kube.getStatefulSet('ns', 'swarm-worker'))!),
      pods: podsDigest(pods),
      leases: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
      configMap: configMapDigest(kube.configMaps.get('ns/swarm-worker-config')),
    });
  });

  it('digests ignore resourceVersions and order, and see any field the decisions read', () => {
    const pod = (name: string, rv: string, ready = true): PodView => ({
      name,
      namespace: 'ns',
      uid: name,
      resourceVersion: rv,
      creationTimestamp: '2026-11-22T00:00:00Z',
      ready,
      terminating: false,
      labels: {},
    });
    expect(podsDigest([pod('a', '1'), pod('b', '2')])).toBe(podsDigest([pod('b', '7'), pod('a', '9')]));
    expect(podsDigest([pod('a', '1'), pod('b', '2', false)])).not.toBe(podsDigest([pod('a', '1'), pod('b', '2')]));
  });

  it('is dropped while a problem stands: no glance answers for a Swarm that is not judged whole', async () => {
    const { kube, assign, status } = await converged();
    kube.statefulSets.delete('ns/swarm-worker');
    await assign.handle(statefulSetEvent);
    expect(status().observed).toBeUndefined();
    kube.calls = [];
    await assign.handle(swarmEvent);
    expect(kube.calls).toContain('getStatefulSet');
  });
});

describe('a glance', () => {
  it('answers an event whose object digests as recorded after three reads, with nothing written, from any instance', async () => {
    const { kube } = await converged();
    // A fresh instance: nothing remembered, the record is in status.
    const fresh = assignFunction({ kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog }, createCoalescer());
    const answer = await fresh.handle(podEvent);
    expect([...kube.calls].sort()).toEqual(['getConfigMap', 'listPods', 'listSwarmsNaming']);
    expect(kube.writes).toEqual([]);
    expect(answer.summary).toMatchObject({ swarms: [{ result: 'unchanged', glanced: true, writes: 0 }] });
  });

  it('a changed object is looked at whole, reusing what the glance read: five reads, the status write, and the look confirming it', async () => {
    const { kube, assign, status } = await converged();
    const before = status().observed!.pods;
    kube.setReady('ns', 'swarm-worker-1', false);
    await assign.handle(podEvent);
    expect([...kube.calls].sort()).toEqual([...FIVE, 'replaceSwarmStatus', 'createEvent', ...FIVE].sort());
    expect(status()).toMatchObject({ readyReplicas: 2 });
    expect(status().observed!.pods).not.toBe(before);
  });

  it('reads only the event\'s object: a change without its own event yet waits for that event (or the resync)', async () => {
    const { kube, assign, status } = await converged();
    kube.setStatefulSet('ns', 'swarm-worker', 4);
    kube.startPod('ns', 'swarm-worker', 3);
    await assign.handle(podEvent);
    // The pods changed (a fourth), so the Pod event looks whole and sees the StatefulSet too.
    expect(status().workers).toHaveLength(4);
    kube.setStatefulSet('ns', 'swarm-worker', 5);
    kube.calls = [];
    await assign.handle(swarmEvent);
    expect(kube.calls).not.toContain('getStatefulSet');
    expect(status().workers).toHaveLength(4);
    // The StatefulSet's own event.
    await assign.handle(statefulSetEvent);
    expect(status().workers).toHaveLength(5);
  });

  it('a spec not yet observed, a ConfigMap edited, or the deadline passed: the whole look', async () => {
    const { kube, assign, clock, status } = await converged();
    kube.updateSwarmSpec('ns', 'swarm', (s) => (s.spec.workload.jobs = [...s.spec.workload.jobs, 'f']));
    await assign.handle(swarmEvent);
    expect(kube.calls).toEqual(expect.arrayContaining(FIVE));
    expect(kube.configFor('ns', 'swarm-worker-config')).toMatch(/- f$/m);

    const cm = kube.configMaps.get('ns/swarm-worker-config')!;
    cm.annotations = { ...cm.annotations, 'example.com/note': 'by hand' };
    kube.calls = [];
    await assign.handle(configMapEvent);
    expect(kube.calls).toEqual(expect.arrayContaining(['getStatefulSet', 'listPods', 'listLeases']));
    expect(status().observed!.configMap).toBe(configMapDigest(cm));

    // A rollout waiting on a worker: until its progress deadline.
    kube.updateSwarmSpec('ns', 'swarm', (s) => (s.spec.restart = { policy: 'None', progressDeadlineSeconds: 60 }));
    await assign.handle(swarmEvent);
    kube.setReady('ns', 'swarm-worker-1', false);
    await assign.handle(podEvent);
    expect(status().observed!.until).toBeDefined();
    kube.calls = [];
    await assign.handle(statefulSetEvent);
    expect(kube.calls).not.toContain('listPods');
    clock.now = new Date(Date.parse(status().observed!.until!) + 1000);
    await assign.handle(statefulSetEvent);
    expect(kube.calls).toContain('listPods');
    expect(status()).toMatchObject({ phase: 'Degraded' });
  });

  it('while restarts are recorded, a glance tells restart again, as the whole look does', async () => {
    const { kube, assign } = await converged('Restart');
    kube.setStatefulSet('ns', 'swarm-worker', 4);
    kube.startPod('ns', 'swarm-worker', 3, false);
    const whole = await assign.handle(statefulSetEvent);
    expect(whole.reply?.type).toBe('info.k8slab.swarm.assignment.changed');
    for (let i = 0; i < 2; i++) {
      kube.calls = [];
      const answer = await assign.handle(statefulSetEvent);
      expect([...kube.calls].sort()).toEqual(['getConfigMap', 'getStatefulSet', 'listSwarmsNaming']);
      expect(answer.reply?.type).toBe('info.k8slab.swarm.assignment.changed');
      expect(answer.reply?.data).toMatchObject({ version: (whole.reply?.data as { version: number }).version, workers: [] });
    }
  });

  it('a glance that fails leaves the event to the whole look', async () => {
    const { kube, assign } = await converged();
    kube.fail('listPods');
    const answer = await assign.handle(podEvent);
    expect(answer.status).toBe(202);
    expect(kube.calls.filter((c) => c === 'listPods')).toHaveLength(2);
    expect(answer.summary).toMatchObject({ swarms: [{ result: 'unchanged', writes: 0 }] });
  });

  it('a claim lost to an older Swarm naming the same pool: the whole look reports it', async () => {
    const { kube, assign, status } = await converged();
    kube.addSwarm({ ...swarmOf({ configMapName: 'older-config' }, 'older'), metadata: { name: 'older', namespace: 'ns', creationTimestamp: '2025-01-01T00:00:00Z' } });
    // Its pool's events now name the older Swarm; its own (a label changed, say) finds the claim gone.
    await assign.handle(swarmEvent);
    expect(status().conditions).toEqual(expect.arrayContaining([expect.objectContaining({ type: 'Degraded', reason: 'StatefulSetClaimed' })]));
    expect(status().observed).toBeUndefined();
  });
});
