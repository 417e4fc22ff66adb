// The reconcilers over the stubbed client when the API refuses: permanent
// refusals are recorded on the Swarm and answered 2xx, transient ones surface
// (503, retried), and status never runs ahead of the restart bookkeeping.
import { describe, expect, it } from 'vitest';
import { assignFunction } from '../../functions/assign/index.js';
import { restartFunction } from '../../functions/restart/index.js';
import { LIMITS } from '../../lib/api/schema.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import { KubeError } from '../../lib/kube/errors.js';
import { reconcileAssign } from '../../lib/reconcilers/assign.js';
import { createCoalescer } from '../../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { reconcileRestart } from '../../lib/reconcilers/restart.js';
import type { MemoryKube } from '../support/memory-kube.js';
import { silentLog, stubWorld, type swarmOf } from '../support/fixtures.js';

const key = { namespace: 'ns', name: 'swarm' };
/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } as const;
function world(replicas = 2, spec: Parameters<typeof swarmOf>[0] = {}) {
  const warnings: string[] = [];
  const log: ReconcileEnv['log'] = { ...silentLog, warn: (_o, msg) => warnings.push(msg ?? '') };
  return { ...stubWorld(replicas, spec, log), warnings };
}
const status = (kube: MemoryKube) => kube.swarms.get('ns/swarm')!.status!;
const condition = (kube: MemoryKube, type: string) => status(kube).conditions!.find((c) => c.type === type);
const forbidden = (op: string, verb: 'CREATE' | 'PATCH' | 'UPDATE') =>
  new KubeError('Forbidden', 403, `${verb} ${op}: 403 ${op} is forbidden: User "system:serviceaccount:swarm-system:swarm-assign" cannot ${verb.toLowerCase()} resource`, `${verb} ${op}`, verb);
const pod = { source: 'apiserver', verb: 'update', mode: 'resource', apiVersion: 'v1', namespace: 'ns', kind: 'Pod', name: 'swarm-worker-0' } as const;
const swarmTrigger = { ...pod, apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', name: 'swarm' } as const;

describe('permanent API refusals are recorded, not retried', () => {
  it.each([
    ['403 on the ConfigMap create', 'createConfigMap', forbidden('configmaps ns/swarm-worker-config', 'CREATE'), 'Forbidden'],
    ['422 on the ConfigMap create', 'createConfigMap', new KubeError('Invalid', 422, 'CREATE configmaps ns/swarm-worker-config: 422 ConfigMap is invalid', 'CREATE configmaps', 'CREATE'), 'InvalidWrite'],
    ['404 on the create: the namespace is gone', 'createConfigMap', new KubeError('NotFound', 404, 'CREATE configmaps ns/swarm-worker-config: 404 namespaces "ns" not found', 'CREATE configmaps', 'CREATE'), 'NamespaceNotFound'],
  ] as const)('%s → Degraded with its reason, a Warning Event naming the call, answered 2xx', async (_what, op, error, reason) => {
    const { kube, env } = world();
    kube.fail(op, 10, error);
    const response = await assignFunction(env, createCoalescer()).handle(swarmTrigger);
    expect(response.status).toBe(202);
    expect(response.summary.swarms).toMatchObject([{ result: 'blocked', reason }]);
    expect(status(kube).phase).toBe('Degraded');
    expect(condition(kube, 'Degraded')).toMatchObject({ status: 'True', reason });
    expect(condition(kube, 'Ready')?.message).toContain('CREATE configmaps ns/swarm-worker-config');
    expect(kube.events.map((e) => [e.type, e.reason])).toEqual([['Warning', reason], ['Warning', reason]]);
    // Fixed by an admin: the next event (or resync) converges.
    kube.heal();
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'changed', version: 1 });
    expect(status(kube).phase).not.toBe('Degraded');
  });

  it('a forbidden ConfigMap patch, then restart forbidden to delete pods: each recorded (status, Warning Event), each answered 2xx', async () => {
    const { kube, env } = world(2, RESTART);
    await reconcileAssign(env, key);
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    kube.startPod('ns', 'swarm-worker', 2);
    kube.fail('patchConfigMap', 1, forbidden('configmaps ns/swarm-worker-config', 'PATCH'));
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'blocked', reason: 'Forbidden' });
    expect(condition(kube, 'Degraded')?.message).toMatch(/^PATCH configmaps ns\/swarm-worker-config: 403/);
    expect(await reconcileAssign(env, key)).toMatchObject({ result: 'changed', version: 2 });
    kube.fail('deletePod', 1, forbidden('pods ns/swarm-worker-0', 'UPDATE'));
    const response = await restartFunction(env, createCoalescer()).handle(pod);
    expect(response.status).toBe(202);
    expect(response.summary.swarms).toMatchObject([{ result: 'blocked' }]);
    // restart owns no field of status: its refusal is a Warning Event on the Swarm.
    expect(kube.events.at(-1)).toMatchObject({ type: 'Warning', reason: 'Forbidden', reportingComponent: 'test' });
    expect(kube.events.at(-1)?.message).toMatch(/pods ns\/swarm-worker-0/);
  });

  it('even the status write forbidden: logged, and still answered 2xx (the event is final)', async () => {
    const { kube, env, warnings } = world();
    kube.fail('createConfigMap', 1, forbidden('configmaps ns/swarm-worker-config', 'CREATE'));
    kube.fail('replaceSwarmStatus', 1, forbidden('swarms/status ns/swarm', 'UPDATE'));
    const response = await assignFunction(env, createCoalescer()).handle(swarmTrigger);
    expect(response.status).toBe(202);
    expect(warnings).toContain('could not record the failure on the Swarm either');
    expect(kube.swarms.get('ns/swarm')!.status).toBeUndefined();
  });

  it('a status write refused as invalid after the ConfigMap was written still announces the change', async () => {
    const { kube, env } = world();
    await reconcileAssign(env, key);
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    kube.fail('replaceSwarmStatus', 1, new KubeError('Invalid', 422, 'UPDATE swarms/status ns/swarm: 422 status.conditions[0].message: Too long', 'UPDATE swarms/status', 'UPDATE'));
    const out = await reconcileAssign(env, key);
    expect(out).toMatchObject({ result: 'blocked', reason: 'InvalidWrite', notify: true, version: 2 });
    expect(condition(kube, 'Degraded')).toMatchObject({ reason: 'InvalidWrite' });
  });

  it('transient failures and persistent conflicts still surface (503, the broker retries)', async () => {
    const { kube, env } = world();
    kube.fail('createConfigMap', 1, new KubeError('Transient', 429, 'too many requests', 'CREATE configmaps', 'CREATE'));
    await expect(assignFunction(env, createCoalescer()).handle(swarmTrigger)).rejects.toMatchObject({ kind: 'Transient' });
    kube.fail('createConfigMap', 10, new KubeError('Conflict', 409, 'exists', 'CREATE configmaps', 'CREATE'));
    await expect(reconcileAssign({ ...env, maxAttempts: 3 }, key)).rejects.toMatchObject({ kind: 'Transient' });
    expect(kube.events).toEqual([]);
  });

  it('listing Swarms forbidden: nothing to record it on, logged and answered 2xx', async () => {
    const { kube, env, warnings } = world();
    kube.fail('listSwarmsNaming', 1, new KubeError('Forbidden', 403, 'LIST swarms in ns: 403', 'LIST swarms in ns', 'LIST'));
    const response = await restartFunction(env, createCoalescer()).handle(pod);
    expect(response).toMatchObject({ status: 202, summary: { swarms: [] } });
    expect(warnings).toContain('cannot list Swarms; event ignored');
  });
});

describe('limits', () => {
  it('an oversize config: Degraded/ConfigMapTooLarge, a Warning Event, nothing written, answered 2xx', async () => {
    const jobs = Array.from({ length: 3000 }, (_, i) => `${i}-${'€'.repeat(LIMITS.jobNameMaxLength - 6)}`);
    const { kube, env } = world(2, { jobs });
    const response = await assignFunction(env, createCoalescer()).handle(swarmTrigger);
    expect(response.status).toBe(202);
    expect(kube.configMaps.size).toBe(0);
    expect(condition(kube, 'Degraded')).toMatchObject({ status: 'True', reason: 'ConfigMapTooLarge' });
    expect(condition(kube, 'Degraded')?.message).toMatch(/bytes of data .*the limit is 1,048,576 bytes/);
    expect(kube.events.map((e) => [e.type, e.reason])).toEqual([['Warning', 'ConfigMapTooLarge'], ['Warning', 'ConfigMapTooLarge']]);
  });
});

describe('status is never written before the restart bookkeeping it reports on', () => {
  async function restartedButNotPruned() {
    const w = world(2, RESTART);
    await reconcileAssign(w.env, key);
    w.kube.setStatefulSet('ns', 'swarm-worker', 3);
    w.kube.startPod('ns', 'swarm-worker', 2);
    await reconcileAssign(w.env, key);
    // The StatefulSet controller replaced both losers; assign then published the jobs awaiting the
    // new worker, which is restarted to load them: replaced too before restart looked again.
    for (const i of [0, 1]) w.kube.startPod('ns', 'swarm-worker', i);
    await reconcileAssign(w.env, key);
    w.kube.startPod('ns', 'swarm-worker', 2);
    return w;
  }
  const listed = (kube: MemoryKube) => readRestarts(kube.configMaps.get('ns/swarm-worker-config')!.annotations).steps.map((s) => s.worker);

  it('assign, seeing every restart done but still listed, forgets them in its guarded write first and only then writes Running', async () => {
    const { kube, env } = await restartedButNotPruned();
    kube.writes = [];
    await reconcileAssign(env, key);
    expect(kube.writes.map((w) => w.op)).toEqual(['patchConfigMap', 'replaceSwarmStatus', 'createEvent']);
    expect(listed(kube)).toEqual([]);
    expect(status(kube).phase).toBe('Running');
  });

  it('restart writes neither the bookkeeping nor status: assign owns both', async () => {
    const { kube, env } = await restartedButNotPruned();
    kube.writes = [];
    await reconcileRestart(env, key);
    expect(kube.writes).toEqual([]);
    expect(listed(kube)).toEqual(['swarm-worker-2']);
  });

  it('when forgetting the bookkeeping fails, Running is not written', async () => {
    const { kube, env } = await restartedButNotPruned();
    kube.fail('patchConfigMap');
    await expect(reconcileAssign(env, key)).rejects.toMatchObject({ kind: 'Transient' });
    expect(listed(kube)).toEqual(['swarm-worker-2']);
    expect(status(kube).phase).not.toBe('Running');
  });

  it('whatever interleaving of assign and restart: Running never while the annotation lists a live worker', async () => {
    const { kube, env } = await restartedButNotPruned();
    const seen: Array<{ phase?: string; listed: string[] }> = [];
    kube.beforeCall = (op) => {
      if (op === 'replaceSwarmStatus') return;
      seen.push({ phase: kube.swarms.get('ns/swarm')!.status?.phase, listed: listed(kube) });
    };
    await Promise.all([reconcileAssign(env, key), reconcileRestart(env, key), reconcileAssign(env, key)]);
    seen.push({ phase: status(kube).phase, listed: listed(kube) });
    expect(seen.filter((s) => s.phase === 'Running' && s.listed.length > 0)).toEqual([]);
    expect(seen.at(-1)).toEqual({ phase: 'Running', listed: [] });
  });
});
