// The reconcilers over a stubbed KubeClient: at-least-once events, concurrency,
// transient failures, invalid specs. (The same flows run against the real API
// server in test/integration.)
import { describe, expect, it } from 'vitest';
import { KubeError } from '../../lib/kube/errors.js';
import { reconcileAssign } from '../../lib/reconcilers/assign.js';
import { createCoalescer } from '../../lib/reconcilers/shortcuts.js';
import { reconcileRestart } from '../../lib/reconcilers/restart.js';
import { targetsFor } from '../../lib/reconcilers/keys.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import { parse } from '../../lib/workerconfig/index.js';
import type { MemoryKube } from '../support/memory-kube.js';
import { stubWorld } from '../support/fixtures.js';

const key = { namespace: 'ns', name: 'swarm' };
const world = stubWorld;
/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } as const;
/** Plays the StatefulSet controller: deleted pods come back with new uids, Ready. */
function recreate(kube: MemoryKube): void {
  for (const name of kube.reapTerminating()) kube.startPod('ns', 'swarm-worker', Number(name.split('-').pop()));
}

describe('assign', () => {
  it('writes the ConfigMap and status once; a repeated event writes nothing', async () => {
    const { kube, env } = world();
    const first = await reconcileAssign(env, key);
    expect(first).toMatchObject({ result: 'changed', version: 1 });
    expect(kube.writes.map((w) => w.op)).toContain('createConfigMap');
    kube.writes = [];
    const again = await reconcileAssign(env, key);
    expect(again).toMatchObject({ result: 'unchanged', writes: 0 });
    expect(kube.writes).toEqual([]);
  });

  it('an invalid spec sets Ready=False/InvalidSpec, records an Event and writes no ConfigMap', async () => {
    const { kube, env } = world(2, { jobs: ['a', 'b', 'a'] });
    const out = await reconcileAssign(env, key);
    expect(out).toMatchObject({ result: 'invalid', reason: 'InvalidSpec' });
    expect(out.message).toMatch(/duplicate job names: "a"/);
    expect(kube.configMaps.size).toBe(0);
    const ready = kube.swarms.get('ns/swarm')!.status!.conditions!.find((c) => c.type === 'Ready');
    expect(ready).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
    expect(kube.events.map((e) => e.reason)).toContain('InvalidSpec');
    // Sparse: the same problem again records nothing new.
    kube.events = [];
    await reconcileAssign(env, key);
    expect(kube.events).toEqual([]);
  });

  it('hot reload over a pool whose pods do not acknowledge is refused like an invalid spec: AcknowledgementRequired, nothing written but status', async () => {
    const { kube, env } = world(2);
    const sts = kube.statefulSets.get('ns/swarm-worker')!;
    kube.statefulSets.set('ns/swarm-worker', { ...sts, templateLabels: { app: 'swarm-worker' } });
    const out = await reconcileAssign(env, key);
    expect(out).toMatchObject({ result: 'blocked', reason: 'AcknowledgementRequired' });
    expect(out.message).toMatch(/k8slab.info\/acknowledges: lease/);
    expect(kube.configMaps.size).toBe(0);
    expect(kube.writes.map((w) => w.op)).not.toContain('annotatePod');
    const status = kube.swarms.get('ns/swarm')!.status!;
    expect(status.phase).toBe('Degraded');
    expect(status.conditions!.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'AcknowledgementRequired' });
    expect(kube.events).toContainEqual(expect.objectContaining({ type: 'Warning', reason: 'AcknowledgementRequired' }));
    // The same pool labelled to acknowledge is served; restart-only workers need no label.
    kube.statefulSets.set('ns/swarm-worker', { ...sts, templateLabels: { app: 'swarm-worker', 'k8slab.info/acknowledges': 'lease' } });
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'changed' });
    const restarting = world(2, RESTART);
    restarting.kube.statefulSets.set('ns/swarm-worker', { ...sts, templateLabels: { app: 'swarm-worker' } });
    expect(await reconcileAssign(restarting.env, key)).toMatchObject({ result: 'changed' });
  });

  it('a gone Swarm is a no-op', async () => {
    const { kube, env } = world();
    kube.swarms.clear();
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'gone', writes: 0 });
    expect(kube.writes).toEqual([]);
  });

  it('a transient API failure surfaces (so the broker retries) and a retry converges', async () => {
    const { kube, env } = world();
    kube.fail('createConfigMap');
    await expect(reconcileAssign(env, key)).rejects.toMatchObject({ kind: 'Transient' });
    expect(kube.configMaps.size).toBe(0);
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'changed', version: 1 });
  });

  it('a status write failing after the ConfigMap write still reports the change on retry (restarts are announced)', async () => {
    const { kube, env } = world(2, RESTART);
    await reconcileAssign(env, key);
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    kube.fail('replaceSwarmStatus');
    await expect(reconcileAssign(env, key)).rejects.toThrow(/injected/);
    const retry = await reconcileAssign(env, key);
    // The ConfigMap was already written; restarts are outstanding, so restart is told again.
    expect(retry.result).toBe('unchanged');
    expect(retry.notify).toBe(true);
  });

  it('concurrent reconciles for one Swarm lose no update and converge (guarded writes + retry)', async () => {
    const { kube, env } = world();
    await reconcileAssign(env, key);
    // Interleave: both read, then one writes; the other's write conflicts and re-reads.
    let reads = 0;
    let release: () => void = () => {};
    const bothRead = new Promise<void>((r) => (release = r));
    kube.beforeCall = async (op) => {
      if (op === 'getConfigMap' && ++reads === 2) release();
      if (op === 'patchConfigMap' || op === 'replaceSwarmStatus') await bothRead;
    };
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    let conflicts = 0;
    const counting = { ...env, onConflictRetry: () => void (conflicts += 1) };
    const [a, b] = await Promise.all([reconcileAssign(counting, key), reconcileAssign(counting, key)]);
    expect(conflicts).toBeGreaterThan(0);
    kube.beforeCall = undefined;
    expect([a.result, b.result].sort()).toEqual(['changed', 'unchanged']);
    const config = parse(kube.configFor('ns', 'swarm-worker-config')!);
    expect(config.version).toBe(2);
    expect(Object.keys(config.workloads)).toHaveLength(3);
    kube.writes = [];
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'unchanged', writes: 0 });
  });

  it('a status write judged from reads another instance outran is corrected by the look after it', async () => {
    const { kube, env } = world(3);
    await reconcileAssign(env, key);
    const status = () => kube.swarms.get('ns/swarm')!.status!;
    expect(status()).toMatchObject({ phase: 'Running', readyReplicas: 3 });
    // Instance A reconciles a pod's readiness flap: it reads swarm-worker-1 not Ready...
    kube.setReady('ns', 'swarm-worker-1', false);
    let other: Promise<unknown> | undefined;
    kube.beforeCall = async (op) => {
      if (op !== 'replaceSwarmStatus' || other) return;
      // ...which is Ready again before A's status write lands. Instance B takes that
      // event, finds status already saying so and writes nothing; A's write then lands.
      kube.setReady('ns', 'swarm-worker-1', true);
      other = reconcileAssign(env, key);
      expect(await other).toMatchObject({ writes: 0 });
    };
    // A's status write comes back as an echo, which is not reconciled: A looks again itself.
    kube.writes = [];
    await reconcileAssign(env, key);
    kube.beforeCall = undefined;
    expect(kube.writes.filter((w) => w.op === 'replaceSwarmStatus')).toHaveLength(2);
    expect(status()).toMatchObject({ phase: 'Running', readyReplicas: 3 });
    kube.writes = [];
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'unchanged', writes: 0 });
  });

  it('gives up after bounded conflicts with a transient error', async () => {
    const { kube, env } = world();
    kube.fail('createConfigMap', 10, new KubeError('Conflict', 409, 'exists', 'create'));
    await expect(reconcileAssign({ ...env, maxAttempts: 3 }, key)).rejects.toMatchObject({ kind: 'Transient' });
  });
});

describe('restart', () => {
  async function scaledTo3() {
    const w = world(2, RESTART);
    await reconcileAssign(w.env, key);
    w.kube.setStatefulSet('ns', 'swarm-worker', 3);
    w.kube.startPod('ns', 'swarm-worker', 2, false);
    await reconcileAssign(w.env, key);
    return w;
  }

  it('restarts each worker whose published share changed exactly once, losers first, one at a time within maxUnavailable; assign then forgets the bookkeeping', async () => {
    const { kube, env } = await scaledTo3();
    // The new worker is not Ready yet: it is the one worker maxUnavailable allows out of service.
    const blocked = await reconcileRestart(env, key);
    expect(blocked.restarted).toEqual([]);
    expect(blocked.waiting).toMatch(/maxUnavailable=1/);
    kube.setReady('ns', 'swarm-worker-2', true);
    const order: string[] = [];
    for (let round = 0; round < 6; round++) {
      const out = await reconcileRestart(env, key);
      order.push(...out.restarted);
      // Duplicate delivery of the same event changes nothing.
      expect((await reconcileRestart(env, key)).restarted).toEqual([]);
      recreate(kube);
      // The replacement changes the StatefulSet's status: an event for assign.
      await reconcileAssign(env, key);
    }
    // The new worker last: the jobs it gains are published to it (version 3) once its losers stopped them.
    expect(order).toEqual(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
    const cm = kube.configMaps.get('ns/swarm-worker-config')!;
    expect(readRestarts(cm.annotations).steps).toEqual([]);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', readyReplicas: 3, version: 3 });
  });

  it('a stale event after convergence deletes nothing', async () => {
    const { kube, env } = await scaledTo3();
    kube.setReady('ns', 'swarm-worker-2', true);
    for (let i = 0; i < 4; i++) {
      await reconcileRestart(env, key);
      recreate(kube);
    }
    const deletes = kube.writes.filter((w) => w.op === 'deletePod').length;
    await reconcileRestart(env, key);
    await reconcileAssign(env, key);
    expect(kube.writes.filter((w) => w.op === 'deletePod').length).toBe(deletes);
  });

  it('deletes nothing on a ConfigMap read without a resourceVersion: its intent could not be guarded', async () => {
    const { kube, env } = await scaledTo3();
    kube.setReady('ns', 'swarm-worker-2', true);
    const cm = kube.configMaps.get('ns/swarm-worker-config')!;
    kube.configMaps.set('ns/swarm-worker-config', { ...cm, resourceVersion: undefined as never });
    const out = await reconcileRestart(env, key);
    expect(out.restarted).toEqual([]);
    expect(out.waiting).toMatch(/without a resourceVersion/);
    expect(kube.writes.filter((w) => w.op === 'deletePod')).toEqual([]);
  });

  it('does nothing for hot-reloading workers', async () => {
    const { kube, env } = world(2, { restart: { policy: 'None' } });
    await reconcileAssign(env, key);
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    kube.startPod('ns', 'swarm-worker', 2);
    await reconcileAssign(env, key);
    expect((await reconcileRestart(env, key)).restarted).toEqual([]);
    expect(kube.writes.filter((w) => w.op === 'deletePod')).toEqual([]);
  });
});

describe('routing and coalescing', () => {
  it('maps StatefulSet and Pod triggers to the Swarm that manages them', async () => {
    const { env } = world();
    const base = { source: 'apiserver', verb: 'update', mode: 'resource', apiVersion: 'v1', namespace: 'ns' } as const;
    const keysOf = async (trigger: Parameters<typeof targetsFor>[1]) => (await targetsFor(env, trigger)).map((t) => t.key);
    expect(await keysOf({ ...base, kind: 'StatefulSet', name: 'swarm-worker' })).toEqual([key]);
    expect(await keysOf({ ...base, kind: 'Pod', name: 'swarm-worker-7' })).toEqual([key]);
    expect(await keysOf({ ...base, kind: 'Pod', name: 'other-0' })).toEqual([]);
    // A worker's acknowledgement Lease is named after its pod.
    expect(await keysOf({ ...base, kind: 'Lease', apiVersion: 'coordination.k8s.io/v1', name: 'swarm-worker-1' })).toEqual([key]);
  });

  it('events arriving during a reconcile cause exactly one follow-up', async () => {
    const coalescer = createCoalescer();
    let runs = 0;
    let unblock: () => void = () => {};
    const gate = new Promise<void>((r) => (unblock = r));
    const work = async () => {
      runs += 1;
      if (runs === 1) await gate;
      return runs;
    };
    const first = coalescer.run('k', work);
    const joiners = [coalescer.run('k', work), coalescer.run('k', work), coalescer.run('k', work)];
    unblock();
    const results = await Promise.all([first, ...joiners]);
    expect(runs).toBe(2);
    expect(results.map((r) => r.value)).toEqual([1, 2, 2, 2]);
    expect(results.map((r) => r.shared)).toEqual([false, false, true, true]);
    expect(coalescer.inFlight()).toBe(0);
  });
});
