// What one event costs in API requests, counted over the stubbed client: a
// no-op event reads each object once (no second list, no second read for the
// gauges) and writes nothing, however many other Swarms share the namespace.
// restart reads at most three objects (pods only while restarts are recorded);
// assign also reads what the workers report — their pods and acknowledgement
// Leases — because status judges coverage from them (five requests, in two
// round trips: the pods by the selector status recorded, checked after).
import { describe, expect, it } from 'vitest';
import { HTTP } from 'cloudevents';
import { Writable } from 'node:stream';
import { assignFunction } from '../../functions/assign/index.js';
import { readSwarmView } from '../../functions/introspection-read.js';
import { createApp } from '../../functions/app.js';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { createLogger } from '../../lib/observability/logger.js';
import { createMetrics } from '../../lib/observability/metrics.js';
import { restartFunction } from '../../functions/restart/index.js';
import type { JobSpec } from '../../lib/assignment/types.js';
import type { Trigger } from '../../lib/events/types.js';
import { createCoalescer } from '../../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { silentLog } from '../support/fixtures.js';
import { swarmOf } from '../support/fixtures.js';
import { MemoryKube } from '../support/memory-kube.js';

const base = { source: 'apiserver', verb: 'update', mode: 'resource', namespace: 'ns' } as const;
const swarmEvent: Trigger = { ...base, kind: 'Swarm', apiVersion: 'k8slab.info/v1alpha1', name: 'swarm', statefulSetName: 'swarm-worker' };
const statefulSetEvent: Trigger = { ...base, kind: 'StatefulSet', apiVersion: 'apps/v1', name: 'swarm-worker' };
const podEvent: Trigger = { ...base, kind: 'Pod', apiVersion: 'v1', name: 'swarm-worker-1', ownerStatefulSet: 'swarm-worker' };
const leaseEvent: Trigger = { ...base, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: 'swarm-worker-1' };
const configMapEvent: Trigger = { ...base, kind: 'ConfigMap', apiVersion: 'v1', name: 'swarm-worker-config', swarm: 'swarm' };
const changedEvent: Trigger = { source: 'swarm', type: 'assignment.changed', namespace: 'ns', name: 'swarm', uid: 'u', version: 1, workers: [] };
/** What assign reads for every event: the Swarms naming the pool, the pool, the ConfigMap, the pods and the Leases. */
const FIVE = ['listSwarmsNaming', 'getStatefulSet', 'getConfigMap', 'listPods', 'listLeases'] as const;

/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } as const;

/** A converged Swarm of 3 workers, and `others` unrelated Swarms in the same namespace. */
async function converged(others = 0, spec: Parameters<typeof swarmOf>[0] = {}) {
  const kube = new MemoryKube();
  kube.addSwarm(swarmOf({ jobs: ['a', 'b', 'c', 'd', 'e'], ...spec }));
  for (let i = 0; i < others; i++) kube.addSwarm(swarmOf({ statefulSetName: `other-${i}`, configMapName: `other-${i}` }, `other-${i}`));
  kube.setStatefulSet('ns', 'swarm-worker', 3);
  for (let i = 0; i < 3; i++) kube.startPod('ns', 'swarm-worker', i);
  const env: ReconcileEnv = { kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog };
  const assign = assignFunction(env, createCoalescer());
  const restart = restartFunction(env, createCoalescer());
  await assign.handle(swarmEvent);
  await restart.handle(changedEvent);
  await assign.handle(swarmEvent);
  await restart.handle(changedEvent);
  kube.calls = [];
  kube.writes = [];
  return { kube, assign, restart };
}

describe('API requests per no-op event', () => {
  it.each([
    // The whole look: the Swarms naming the pool (the Swarm itself, and its claim), the pool, the ConfigMap, the pods and the Leases.
    ['assign', 'a Swarm event', swarmEvent, FIVE],
    // Its copy's status had observed its generation: assign's own status write, back.
    ['assign', 'a Swarm update echoing its status write', { ...swarmEvent, generationObserved: true }, []],
    ['assign', 'a StatefulSet event', statefulSetEvent, FIVE],
    ['assign', 'a Pod event', podEvent, FIVE],
    ['assign', 'a Lease event', leaseEvent, FIVE],
    // Named by its owner: the Swarm read, then the whole look (its claim checked by the Swarms naming its pool).
    ['assign', 'a ConfigMap event', configMapEvent, ['getSwarm', ...FIVE]],
    ['restart', 'a Pod event', podEvent, ['listSwarmsNaming', 'getConfigMap']],
    ['restart', 'an assignment.changed event', changedEvent, ['getSwarm', 'listSwarmsNaming', 'getConfigMap']],
  ] as const)('%s, %s: each object read once (assign also reads what the workers report), nothing written', async (fn, _what, trigger, reads) => {
    for (const others of [0, 20]) {
      const world = await converged(others);
      await (fn === 'assign' ? world.assign : world.restart).handle(trigger);
      expect([...world.kube.calls].sort()).toEqual([...reads].sort());
      expect(world.kube.writes).toEqual([]);
    }
  });

  it('a resync looks at everything, as an event does (it recovers what events missed)', async () => {
    const world = await converged();
    await world.assign.handle({ source: 'ping', namespace: 'ns' } as Trigger);
    expect([...world.kube.calls].sort()).toEqual(['getConfigMap', 'getStatefulSet', 'getSwarm', 'listLeases', 'listPods', 'listSwarmNames', 'listSwarmsNaming']);
    expect(world.kube.writes).toEqual([]);
  });

  it('a Swarm event without the hint (ref mode) or with a stale one reads the Swarm once more', async () => {
    const world = await converged();
    const { statefulSetName: _hint, ...refMode } = swarmEvent as typeof swarmEvent & { statefulSetName?: string };
    for (const trigger of [refMode, { ...swarmEvent, statefulSetName: 'renamed' }]) {
      world.kube.calls = [];
      await world.assign.handle(trigger);
      expect([...world.kube.calls].filter((c) => c !== 'listSwarmsNaming').sort()).toEqual(['getConfigMap', 'getStatefulSet', 'getSwarm', 'listLeases', 'listPods']);
    }
    expect(world.kube.writes).toEqual([]);
  });

  it('assign lists the pods by the selector its status recorded, alongside the StatefulSet, and again if the StatefulSet says otherwise', async () => {
    const world = await converged();
    const swarm = world.kube.swarms.get('ns/swarm')!;
    expect(swarm.status?.selector).toBe('app=swarm-worker');
    // A StatefulSet recreated with another selector (or a status written by hand): the guess lists nothing useful.
    swarm.status = { ...swarm.status, selector: 'app=elsewhere' };
    await world.assign.handle(statefulSetEvent);
    // Twice for the event, once for the look that confirms its status write (by the selector just written).
    expect(world.kube.calls.filter((c) => c === 'listPods')).toHaveLength(3);
    expect(world.kube.writes).toEqual([{ op: 'replaceSwarmStatus', name: 'swarm' }]);
    expect(world.kube.swarms.get('ns/swarm')!.status).toMatchObject({ selector: 'app=swarm-worker', phase: 'Running', readyReplicas: 3 });
  });

  it('assign confirms a status write with one more observation of the same five objects', async () => {
    const world = await converged();
    world.kube.setReady('ns', 'swarm-worker-1', false);
    await world.assign.handle(podEvent);
    const five = ['listSwarmsNaming', 'getStatefulSet', 'getConfigMap', 'listPods', 'listLeases'];
    // The write (and the Event for Ready's change), then the look that finds nothing more to write.
    expect([...world.kube.calls].sort()).toEqual([...five, 'replaceSwarmStatus', 'createEvent', ...five].sort());
  });

  it('lists the pods while restarts are recorded', async () => {
    const { kube, assign, restart } = await converged(0, RESTART);
    kube.setStatefulSet('ns', 'swarm-worker', 4);
    kube.startPod('ns', 'swarm-worker', 3, false);
    await assign.handle(statefulSetEvent);
    kube.calls = [];
    await restart.handle(podEvent);
    expect(kube.calls).toContain('listPods');
  });
});

describe('assignment gauges', () => {
  it('follow the reconcile without a read of their own, and go with the Swarm', async () => {
    const kube = new MemoryKube();
    const swarm = kube.addSwarm(swarmOf({ jobs: ['a', 'b', 'c', 'd', 'e'] }));
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    for (let i = 0; i < 3; i++) kube.startPod('ns', 'swarm-worker', i);
    const metrics = createMetrics({ defaultMetrics: false });
    const log = createLogger({ name: 'test', destination: new Writable({ write: (_c, _e, cb) => cb() }) as never });
    const server = createApp({ function: 'assign', kube, log, metrics }).listen(0, '127.0.0.1');
    await new Promise((r) => server.once('listening', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
    // The Swarm as created: no status yet, so each update is one to reconcile (not an echo of a status write).
    const created = structuredClone(swarm);
    const post = async (verb: 'update' | 'delete') => {
      const message = HTTP.binary(apiServerEvent({ verb, mode: 'resource', object: created as never }));
      await (await fetch(url, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string })).text();
    };
    const gauge = async (name: string) => (await metrics.registry.getSingleMetric(name)?.get())?.values.find((v) => v.labels.swarm === 'swarm')?.value;
    try {
      await post('update');
      kube.calls = [];
      await post('update');
      expect([...kube.calls].sort()).toEqual(['getConfigMap', 'getStatefulSet', 'listLeases', 'listPods', 'listSwarmsNaming']);
      expect(await gauge('swarm_assignment_jobs')).toBe(5);
      expect(await gauge('swarm_assignment_workers')).toBe(3);
      kube.swarms.clear();
      await post('delete');
      expect(await gauge('swarm_assignment_jobs')).toBeUndefined();
      expect(await gauge('swarm_assignment_workers')).toBeUndefined();
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});

describe('restart decides only restarts', () => {
  const world = (jobs: JobSpec[], replicas = 2) => {
    const kube = new MemoryKube();
    kube.addSwarm(swarmOf({ jobs }));
    kube.setStatefulSet('ns', 'swarm-worker', replicas);
    for (let i = 0; i < replicas; i++) kube.startPod('ns', 'swarm-worker', i);
    const env: ReconcileEnv = { kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog };
    return { kube, env, assign: assignFunction(env, createCoalescer()), restart: restartFunction(env, createCoalescer()) };
  };

  it("writes no status, so it never disagrees with assign's (dedications included)", async () => {
    const { kube, assign, restart } = world([{ name: 'x', dedicated: true }, { name: 'y', dedicated: true }, 'z']);
    await assign.handle(swarmEvent);
    const byAssign = structuredClone(kube.swarms.get('ns/swarm')?.status);
    expect(byAssign?.conditions?.find((c) => c.type === 'Degraded')).toMatchObject({ status: 'True', reason: 'DedicationsNotHonoured' });
    kube.writes = [];
    await restart.handle(podEvent);
    expect(kube.writes).toEqual([]);
    expect(kube.swarms.get('ns/swarm')?.status).toEqual(byAssign);
  });

  it('leaves status to assign even while assign has not caught up with a spec change or a scale-down', async () => {
    const { kube, assign, restart } = world(['a', 'b', 'c']);
    await assign.handle(swarmEvent);
    const before = structuredClone(kube.swarms.get('ns/swarm')?.status);
    // A spec change assign has not seen yet (or was refused for, as ConfigMapTooLarge would be),
    // then a scale-down assign has not seen: restart writes no status from a stale decision.
    kube.updateSwarmSpec('ns', 'swarm', (s) => s.spec.workload.jobs.push('d'));
    kube.writes = [];
    await restart.handle(podEvent);
    kube.setStatefulSet('ns', 'swarm-worker', 1);
    await restart.handle(podEvent);
    expect(kube.writes).toEqual([]);
    expect(kube.swarms.get('ns/swarm')?.status).toEqual(before);
  });
});

describe('no status fights', () => {
  it('a resize with one instance of each function, events delivered concurrently, meets no 409 on status', async () => {
    const kube = new MemoryKube();
    kube.addSwarm(swarmOf({ jobs: Array.from({ length: 12 }, (_, i) => `job-${i}`), ...RESTART }));
    kube.setStatefulSet('ns', 'swarm-worker', 2);
    for (let i = 0; i < 2; i++) kube.startPod('ns', 'swarm-worker', i);
    const env: ReconcileEnv = { kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog };
    const assign = assignFunction(env, createCoalescer());
    const restart = restartFunction(env, createCoalescer());
    // Every call yields, so the two functions' reads and writes interleave.
    kube.beforeCall = () => new Promise((r) => setImmediate(r));
    const round = () => Promise.all([assign.handle(statefulSetEvent), restart.handle(podEvent), assign.handle(swarmEvent), restart.handle(changedEvent)]);
    await round();
    for (const replicas of [4, 3, 5]) {
      kube.setStatefulSet('ns', 'swarm-worker', replicas);
      for (const [k, p] of kube.pods) if (Number(p.name.split('-').pop()) >= replicas) kube.pods.delete(k);
      for (let i = 0; i < replicas; i++) if (!kube.pods.has(`ns/swarm-worker-${i}`)) kube.startPod('ns', 'swarm-worker', i);
      for (let step = 0; step < 8; step++) {
        await round();
        // The StatefulSet controller replaces what restart deleted.
        for (const name of kube.reapTerminating()) kube.startPod('ns', 'swarm-worker', Number(name.split('-').pop()));
      }
    }
    expect(kube.writes.filter((w) => w.op === 'deletePod').length).toBeGreaterThan(0);
    expect(kube.swarms.get('ns/swarm')?.status?.phase).toBe('Running');
    expect(kube.conflicts.filter((op) => op === 'replaceSwarmStatus')).toEqual([]);
  });
});

describe('the introspection page', () => {
  it('shows the pending restarts status reports, mid-resize', async () => {
    const { kube, assign } = await converged(0, RESTART);
    kube.setStatefulSet('ns', 'swarm-worker', 4);
    kube.startPod('ns', 'swarm-worker', 3, false);
    await assign.handle(statefulSetEvent);
    const status = kube.swarms.get('ns/swarm')?.status;
    const pending = (status?.workers ?? []).filter((w) => w.restartPending).map((w) => w.name);
    expect(pending.length).toBeGreaterThan(0);
    const view = await readSwarmView(kube)('ns', 'swarm');
    expect(view?.pendingRestarts).toEqual(pending);
    expect(view?.workers.filter((w) => w.restartPending).map((w) => w.name)).toEqual(pending);
  });
});
