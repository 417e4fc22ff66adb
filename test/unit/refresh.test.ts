// Asking a hot-reloading worker's kubelet for its ConfigMap now
// (lib/decisions/refresh.ts): which pods, once per share version, and never
// under policy Restart; and what assign writes for it over the stubbed client.
import { describe, expect, it } from 'vitest';
import { decideRefreshes, type RefreshInput } from '../../lib/decisions/refresh.js';
import { KubeError } from '../../lib/kube/errors.js';
import { reconcileAssign } from '../../lib/reconcilers/assign.js';
import type { WorkerConfig } from '../../lib/workerconfig/index.js';
import { stubWorld } from '../support/fixtures.js';
import { acknowledgement, acknowledgingLabels, runs, workerPod } from '../support/views.js';

const config: WorkerConfig = {
  version: 4,
  workloads: {
    'swarm-worker-0': { jobs: ['a', 'b'], version: 4 },
    'swarm-worker-1': { jobs: ['c'], version: 2 },
  },
};
const acking = (ordinal: number, over = {}) => workerPod(ordinal, { labels: acknowledgingLabels, ...over });
const input = (over: Partial<RefreshInput> = {}): RefreshInput => ({
  policy: 'None',
  pool: { kind: 'StatefulSet', name: 'swarm-worker' },
  config,
  pods: [acking(0), acking(1)],
  leases: [],
  ...over,
});
const asked = (over: Partial<RefreshInput> = {}) => decideRefreshes(input(over)).map((r) => `${r.pod}@${r.version}`);

describe('decideRefreshes', () => {
  it('asks every pod whose worker has not acknowledged its share, for its share version', () => {
    expect(decideRefreshes(input())).toEqual([
      { pod: 'swarm-worker-0', uid: 'pod-0', resourceVersion: '1', version: 4 },
      { pod: 'swarm-worker-1', uid: 'pod-1', resourceVersion: '1', version: 2 },
    ]);
  });

  it('never under policy Restart: those workers load at start, and one that reloads anyway would give up jobs early', () => {
    expect(asked({ policy: 'Restart' })).toEqual([]);
  });

  it('not a worker whose own Lease shows it running exactly its share', () => {
    const pods = [acking(0), acking(1)];
    expect(asked({ pods, leases: [runs(pods[0]!, config)] })).toEqual(['swarm-worker-1@2']);
  });

  it('a worker still running the jobs it released (its Lease covers its share) is asked: the next stage waits for it to drop them', () => {
    const pods = [acking(0), acking(1)];
    const releasing: WorkerConfig = { ...config, workloads: { ...config.workloads, 'swarm-worker-1': { jobs: ['c'], version: 2, released: ['d'] } } };
    expect(asked({ config: releasing, pods, leases: [runs(pods[0]!, config), acknowledgement(pods[1]!, 1, ['c', 'd'])] })).toEqual(['swarm-worker-1@2']);
  });

  it('once per share version: a pod already asked for it (or a newer one) is not asked again', () => {
    expect(asked({ pods: [acking(0, { refreshVersion: 4 }), acking(1, { refreshVersion: 1 })] })).toEqual(['swarm-worker-1@2']);
    expect(asked({ pods: [acking(0, { refreshVersion: 5 }), acking(1, { refreshVersion: 2 })] })).toEqual([]);
  });

  it('a Lease of an earlier pod of that name does not count, and a pod that cannot acknowledge is asked once per version', () => {
    const pods = [acking(0, { uid: 'replacement' }), workerPod(1)];
    expect(asked({ pods, leases: [runs(acking(0), config)] })).toEqual(['swarm-worker-0@4', 'swarm-worker-1@2']);
    expect(asked({ pods: [workerPod(1, { refreshVersion: 2 })] })).toEqual([]);
  });

  it('not a terminating pod, a pod with no share, or a pod of another controller', () => {
    const pods = [acking(0, { terminating: true }), acking(1, { ownerStatefulSet: 'other' }), acking(2)];
    expect(asked({ pods })).toEqual([]);
  });

  it('a Deployment pool: its pods through their ReplicaSet', () => {
    const { ownerStatefulSet: _none, ...podOf } = workerPod('pool-h1-aaaaa', { ownerReplicaSet: 'pool-h1', labels: { 'pod-template-hash': 'h1' } });
    const pods = [podOf, { ...podOf, name: 'pool-h1-bbbbb', ownerReplicaSet: 'elsewhere-h1' }];
    const shares: WorkerConfig = { version: 1, workloads: { 'pool-h1-aaaaa': { jobs: ['a'], version: 1 }, 'pool-h1-bbbbb': { jobs: ['b'], version: 1 } } };
    expect(asked({ pool: { kind: 'Deployment', name: 'pool' }, config: shares, pods })).toEqual(['pool-h1-aaaaa@1']);
  });
});

describe('assign asks kubelets to refresh', () => {
  it('policy None: the write of a change annotates each pod once; the next event writes nothing', async () => {
    const { kube, env } = stubWorld(2, { jobs: ['a', 'b', 'c'], restart: { policy: 'None' } });
    const first = await reconcileAssign(env, { namespace: 'ns', name: 'swarm' });
    expect(first.result).toBe('changed');
    expect(kube.writes.filter((w) => w.op === 'annotatePod').map((w) => w.name)).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    expect([...kube.pods.values()].map((p) => p.refreshVersion)).toEqual([1, 1]);
    kube.writes = [];
    const again = await reconcileAssign(env, { namespace: 'ns', name: 'swarm' });
    expect(again.writes).toBe(0);
    expect(kube.writes).toEqual([]);
  });

  it('policy Restart: no pod is annotated', async () => {
    const { kube, env } = stubWorld(2, { jobs: ['a', 'b', 'c'], restart: { policy: 'Restart' } });
    await reconcileAssign(env, { namespace: 'ns', name: 'swarm' });
    expect(kube.writes.filter((w) => w.op === 'annotatePod')).toEqual([]);
  });

  it('a pod that changed meanwhile is skipped by that write, and asked again by the next look (the one confirming the status write)', async () => {
    const { kube, env } = stubWorld(2, { jobs: ['a', 'b', 'c'], restart: { policy: 'None' } });
    const annotate = kube.annotatePod.bind(kube);
    let raced = false;
    kube.annotatePod = async (namespace, name, pre, annotations) => {
      if (!raced && name === 'swarm-worker-1') {
        raced = true;
        kube.setReady('ns', name, true); // a new resourceVersion: the guard refuses
      }
      return annotate(namespace, name, pre, annotations);
    };
    const first = await reconcileAssign(env, { namespace: 'ns', name: 'swarm' });
    expect(first.result).toBe('changed');
    // Refused once by its guard, not retried at once; asked after the status write.
    expect(kube.writes.filter((w) => w.op === 'annotatePod').map((w) => w.name)).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    expect(kube.writes.findIndex((w) => w.op === 'annotatePod' && w.name === 'swarm-worker-1')).toBeGreaterThan(kube.writes.findIndex((w) => w.op === 'replaceSwarmStatus'));
    kube.writes = [];
    await reconcileAssign(env, { namespace: 'ns', name: 'swarm' });
    expect(kube.writes).toEqual([]);
  });

  it('a refused hint (RBAC, the admission policy, a transient error) does not fail the reconcile: the change and status are written, and a warning logged by each look', async () => {
    const warnings: string[] = [];
    const { kube, env } = stubWorld(2, { jobs: ['a', 'b', 'c'], restart: { policy: 'None' } }, { info() {}, debug() {}, warn: (_o: unknown, msg: string) => warnings.push(msg) });
    kube.annotatePod = async () => {
      throw new KubeError('Forbidden', 403, 'pods is forbidden', 'PATCH pods', 'PATCH');
    };
    const outcome = await reconcileAssign(env, { namespace: 'ns', name: 'swarm' });
    expect(outcome.result).toBe('changed');
    expect(kube.writes.map((w) => w.op)).toContain('replaceSwarmStatus');
    expect(kube.writes.map((w) => w.op)).not.toContain('annotatePod');
    // The write, then the look confirming its status write.
    expect(warnings).toEqual(Array(2).fill('could not ask kubelets to refresh the config; the workers get it at their next sync'));
  });
});
