// Swarm-owned worker count (spec.replicas) and the StatefulSet's start ordinal:
// worker identity, the assigner, the resize decisions over plain data, and the
// reconcilers over a stubbed client (config before growth, shrink after coverage).
import { describe, expect, it } from 'vitest';
import { assign, lowerBound } from '../../lib/assignment/index.js';
import { workerIndex, workerNames } from '../../lib/assignment/workers.js';
import { decideRestarts } from '../../lib/decisions/restarts.js';
import { decideScale, workerCount } from '../../lib/decisions/scale.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { podsByWorker } from '../../lib/decisions/workers.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import type { PodView } from '../../lib/kube/types.js';
import { statefulSetView } from '../../lib/kube/views.js';
import { reconcileAssign } from '../../lib/reconcilers/assign.js';
import { reconcileRestart } from '../../lib/reconcilers/restart.js';
import { parse, type WorkerConfig } from '../../lib/workerconfig/index.js';
import type { MemoryKube } from '../support/memory-kube.js';
import { seedStreams, stubWorld, swarmOf } from '../support/fixtures.js';
import { validSwarm, workerPod } from '../support/views.js';

const key = { namespace: 'ns', name: 'swarm' };
const STS = 'swarm-worker';

const pod = (name: string, over: Partial<PodView> = {}): PodView => workerPod(name, { uid: `uid-${name}`, ...over });
/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } as const;

describe('worker identity with a start ordinal (lib/assignment/workers.ts)', () => {
  it('names workers start … start+replicas-1', () => {
    expect(workerNames('w', 3)).toEqual(['w-0', 'w-1', 'w-2']);
    expect(workerNames('w', 3, 5)).toEqual(['w-5', 'w-6', 'w-7']);
    expect(workerNames('w', 0, 5)).toEqual([]);
  });

  it('places a pod among the workers, or nowhere', () => {
    expect(workerIndex('w', 'w-5', 3, 5)).toBe(0);
    expect(workerIndex('w', 'w-7', 3, 5)).toBe(2);
    expect(workerIndex('w', 'w-8', 3, 5)).toBeUndefined();
    expect(workerIndex('w', 'w-4', 3, 5)).toBeUndefined();
    expect(workerIndex('w', 'w-0', 3)).toBe(0);
    expect(workerIndex('w', 'x-5', 3, 5)).toBeUndefined();
  });

  it('podsByWorker keeps the pods of the workers in range only', () => {
    const pods = ['swarm-worker-4', 'swarm-worker-5', 'swarm-worker-6', 'swarm-worker-7'].map((n) => pod(n));
    expect([...podsByWorker(STS, 2, pods, 5).keys()]).toEqual(['swarm-worker-5', 'swarm-worker-6']);
  });

  it('the assigner names workers from the start ordinal and stays sticky over them', () => {
    const first = assign({ statefulSetName: 'w', replicas: 2, startOrdinal: 5, jobs: seedStreams });
    expect(Object.keys(first.assignment)).toEqual(['w-5', 'w-6']);
    expect(Object.values(first.assignment).flat().sort()).toEqual([...seedStreams].sort());
    // The same layout as from ordinal 0, shifted: identity is the position.
    const zero = assign({ statefulSetName: 'w', replicas: 2, jobs: seedStreams });
    expect(first.assignment['w-5']).toEqual(zero.assignment['w-0']);

    const grown = assign({ statefulSetName: 'w', replicas: 3, startOrdinal: 5, jobs: seedStreams, previous: first.assignment });
    expect(Object.keys(grown.assignment)).toEqual(['w-5', 'w-6', 'w-7']);
    const moved = Object.entries(first.assignment).flatMap(([w, jobs]) => jobs.filter((j) => !grown.assignment[w]!.includes(j)));
    expect(moved.length).toBe(lowerBound({ statefulSetName: 'w', replicas: 3, startOrdinal: 5, jobs: seedStreams, previous: first.assignment })!.moves);
    expect(moved.length).toBe(9);
  });

  it('the StatefulSet view carries spec.ordinals.start and status.replicas', () => {
    const view = statefulSetView({
      metadata: { name: STS, namespace: 'ns', uid: 'u' },
      spec: { replicas: 2, ordinals: { start: 5 }, selector: { matchLabels: { app: STS } }, serviceName: STS, template: {} },
      status: { replicas: 3, readyReplicas: 2 },
    });
    expect(view).toMatchObject({ replicas: 2, startOrdinal: 5, observedReplicas: 3, readyReplicas: 2, labelSelector: `app=${STS}` });
    expect(statefulSetView({ spec: { selector: {}, serviceName: STS, template: {} } }).startOrdinal).toBeUndefined();
  });
});

const configOver = (workers: string[], version = 1): WorkerConfig => {
  const shares = workers.map((): string[] => []);
  seedStreams.forEach((job, i) => shares[i % workers.length]!.push(job));
  return { version, workloads: Object.fromEntries(workers.map((w, i) => [w, { jobs: shares[i]!.sort(), version }])) };
};

describe('how many workers the config assigns over (workerCount)', () => {
  const sts = { name: STS, replicas: 3 };
  it('follows the StatefulSet when spec.replicas is unset', () => {
    expect(workerCount({ desired: undefined, handoff: 'MakeBeforeBreak', statefulSet: sts, configWorkers: 2, pods: [] })).toBe(3);
  });
  it('is spec.replicas for a scale-up, and for a MakeBeforeBreak scale-down (the departing pods still run)', () => {
    expect(workerCount({ desired: 5, handoff: 'MakeBeforeBreak', statefulSet: sts, configWorkers: 3, pods: [] })).toBe(5);
    expect(workerCount({ desired: 5, handoff: 'BreakBeforeMake', statefulSet: sts, configWorkers: 3, pods: [] })).toBe(5);
    expect(workerCount({ desired: 1, handoff: 'MakeBeforeBreak', statefulSet: sts, configWorkers: 3, pods: [] })).toBe(1);
  });
  it('BreakBeforeMake keeps the departing workers in the config until their pods are gone', () => {
    const pods = [pod('swarm-worker-0'), pod('swarm-worker-1'), pod('swarm-worker-2', { terminating: true })];
    expect(workerCount({ desired: 2, handoff: 'BreakBeforeMake', statefulSet: sts, configWorkers: 3, pods })).toBe(3);
    const shrunk = { name: STS, replicas: 2 };
    expect(workerCount({ desired: 2, handoff: 'BreakBeforeMake', statefulSet: shrunk, configWorkers: 3, pods })).toBe(3);
    expect(workerCount({ desired: 2, handoff: 'BreakBeforeMake', statefulSet: shrunk, configWorkers: 3, pods: pods.slice(0, 2) })).toBe(2);
    // No config yet: nothing to hand off.
    expect(workerCount({ desired: 2, handoff: 'BreakBeforeMake', statefulSet: sts, configWorkers: undefined, pods })).toBe(2);
  });
  it('departing pods are those past the workers, from the start ordinal', () => {
    // Shrunk to workers 5 and 6: BreakBeforeMake keeps the config at 3 workers while a pod past them remains.
    const input = { desired: 2, handoff: 'BreakBeforeMake', statefulSet: { name: STS, replicas: 2, startOrdinal: 5 }, configWorkers: 3 } as const;
    expect(workerCount({ ...input, pods: ['swarm-worker-5', 'swarm-worker-6', 'swarm-worker-7', 'other-9'].map((n) => pod(n)) })).toBe(3);
    expect(workerCount({ ...input, pods: ['swarm-worker-5', 'swarm-worker-6', 'other-9'].map((n) => pod(n)) })).toBe(2);
  });
});

describe('when to resize the StatefulSet (decideScale)', () => {
  type ScaleInput = Parameters<typeof decideScale>[0];
  const base = (over: Partial<ScaleInput>): ScaleInput => ({
    desired: 3,
    handoff: 'MakeBeforeBreak',
    statefulSet: { name: STS, replicas: 3 },
    jobs: seedStreams,
    config: configOver(workerNames(STS, 3)),
    workspace: { version: 1, steps: [] },
    pods: workerNames(STS, 3).map((n) => pod(n)),
    leases: [],
    ...over,
  });

  it('does nothing without spec.replicas, or at the desired size', () => {
    expect(decideScale(base({ desired: undefined, statefulSet: { name: STS, replicas: 5 } }))).toEqual({ kind: 'none', waiting: '' });
    expect(decideScale(base({}))).toEqual({ kind: 'none', waiting: '' });
  });

  it('grows only once the config over the target count is in force', () => {
    const two = { name: STS, replicas: 2 };
    expect(decideScale(base({ statefulSet: two, config: configOver(workerNames(STS, 2)) }))).toMatchObject({ kind: 'none' });
    expect(decideScale(base({ statefulSet: two }))).toMatchObject({ kind: 'scale', from: 2, to: 3 });
  });

  it('BreakBeforeMake grows after the losers have restarted', () => {
    const two = { name: STS, replicas: 2 };
    const pods = workerNames(STS, 2).map((n) => pod(n));
    const workspace = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'uid-swarm-worker-0', waitFor: [] }] };
    expect(decideScale(base({ handoff: 'BreakBeforeMake', statefulSet: two, pods, workspace }))).toMatchObject({ kind: 'none' });
    const restarted = [pod('swarm-worker-0', { uid: 'fresh' }), pods[1]!];
    expect(decideScale(base({ handoff: 'BreakBeforeMake', statefulSet: two, pods: restarted, workspace }))).toMatchObject({ kind: 'scale', to: 3 });
  });

  it('MakeBeforeBreak shrinks only once the survivors cover every job of the new config', () => {
    const four = { name: STS, replicas: 4 };
    const pods = workerNames(STS, 4).map((n) => pod(n));
    // A survivor not Ready: its jobs are not covered.
    const notReady = [pods[0]!, pod('swarm-worker-1', { ready: false }), ...pods.slice(2)];
    expect(decideScale(base({ statefulSet: four, pods: notReady }))).toMatchObject({ kind: 'none', waiting: expect.stringMatching(/survivors cover/) });
    expect(decideScale(base({ statefulSet: four, pods }))).toMatchObject({ kind: 'scale', from: 4, to: 3 });
    // The config must be the one over the target count.
    expect(decideScale(base({ statefulSet: four, pods, config: configOver(workerNames(STS, 4)) }))).toMatchObject({ kind: 'none' });
  });

  it('MakeBeforeBreak waits for acknowledging survivors to acknowledge their new share', () => {
    const four = { name: STS, replicas: 4 };
    const acks = { 'k8slab.info/acknowledges': 'lease' };
    const pods = workerNames(STS, 4).map((n) => pod(n, { labels: { app: STS, ...acks } }));
    expect(decideScale(base({ statefulSet: four, pods }))).toMatchObject({ kind: 'none' });
  });

  it('BreakBeforeMake shrinks first; scaling to zero shrinks at once', () => {
    const four = { name: STS, replicas: 4 };
    expect(decideScale(base({ handoff: 'BreakBeforeMake', statefulSet: four, config: configOver(workerNames(STS, 4)) }))).toMatchObject({ kind: 'scale', to: 3 });
    expect(decideScale(base({ desired: 0, statefulSet: four, config: { version: 2, workloads: {} } }))).toMatchObject({ kind: 'scale', to: 0 });
  });
});

/** Plays the StatefulSet controller: pods for the ordinals in range (Ready), none beyond, deleted ones replaced. */
function controller(kube: MemoryKube, start = 0, ready = true): void {
  const sts = kube.statefulSets.get(`ns/${STS}`)!;
  kube.reapTerminating();
  for (const [k, p] of kube.pods) if ((workerIndex(STS, p.name, sts.replicas, start) ?? -1) < 0) kube.pods.delete(k);
  for (const name of workerNames(STS, sts.replicas, start)) if (!kube.pods.has(`ns/${name}`)) kube.startPod('ns', STS, Number(name.split('-').pop()), ready);
}
const configIn = (kube: MemoryKube) => parse(kube.configFor('ns', 'swarm-worker-config')!);
const ops = (kube: MemoryKube) => kube.writes.map((w) => w.op).filter((op) => op === 'patchConfigMap' || op === 'createConfigMap' || op === 'replaceStatefulSetScale');
const setDesired = (kube: MemoryKube, replicas: number | undefined) =>
  kube.updateSwarmSpec('ns', 'swarm', (s) => {
    if (replicas === undefined) delete s.spec.replicas;
    else s.spec.replicas = replicas;
  });

/** A converged Swarm owning `from` workers, then spec.replicas set to `to` and one assign: `kube.writes` holds what that assign wrote. */
async function resized(from: number, to: number, spec: Parameters<typeof swarmOf>[0] = {}) {
  const world = stubWorld(from, { replicas: from, ...spec });
  await reconcileAssign(world.env, key);
  world.kube.writes = [];
  setDesired(world.kube, to);
  await reconcileAssign(world.env, key);
  return world;
}

/** Events until nothing changes: assign, restart, the StatefulSet controller. */
async function settle(kube: MemoryKube, env: Parameters<typeof reconcileAssign>[0], start = 0): Promise<void> {
  for (let round = 0; round < 12; round++) {
    await reconcileAssign(env, key);
    await reconcileRestart(env, key);
    controller(kube, start);
  }
  await reconcileAssign(env, key);
}

describe('assign owns the worker count (spec.replicas)', () => {
  it('scale-up: the config over the new count is written first, then the StatefulSet grows once the losers have restarted', async () => {
    const { kube, env } = await resized(2, 3, RESTART);
    // The config, then the seal: the look that confirms the status write lists the pods after the config
    // write landed and writes the bookkeeping again, sealed (lib/decisions/restart-bookkeeping.ts sealRestarts).
    expect(ops(kube)).toEqual(['patchConfigMap', 'patchConfigMap']);
    expect(configIn(kube).version).toBe(2);
    expect(readRestarts(kube.configMaps.get('ns/swarm-worker-config')!.annotations).unsealed).toBeUndefined();
    expect(Object.keys(configIn(kube).workloads)).toEqual(workerNames(STS, 3));
    expect(kube.statefulSets.get(`ns/${STS}`)!.replicas).toBe(2);
    // Break-before-make: the losers stop their moved jobs (restart) before the new pod starts them;
    // version 3 publishes those jobs to it, written before the StatefulSet grows.
    await settle(kube, env);
    expect(kube.writes.map((w) => w.op).filter((op) => op === 'deletePod' || op === 'replaceStatefulSetScale')).toEqual(['deletePod', 'deletePod', 'replaceStatefulSetScale']);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', replicas: 3, readyReplicas: 3, version: 3, selector: `app=${STS}` });
  });

  it('scale-down (BreakBeforeMake): the StatefulSet shrinks first; the config hands off once the pod is gone', async () => {
    const { kube, env } = await resized(3, 2, RESTART);
    expect(ops(kube)).toEqual(['replaceStatefulSetScale']);
    expect(configIn(kube).version).toBe(1);
    // The departing pod is terminating, not gone: still no handoff.
    kube.pods.get(`ns/${STS}-2`)!.terminating = true;
    await reconcileAssign(env, key);
    expect(configIn(kube).version).toBe(1);
    kube.reapTerminating();
    await reconcileAssign(env, key);
    expect(Object.keys(configIn(kube).workloads)).toEqual(workerNames(STS, 2));
    await settle(kube, env);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', replicas: 2, version: 2 });
  });

  it('restores spec.replicas when the StatefulSet is scaled directly', async () => {
    const { kube, env } = stubWorld(2, { replicas: 2 });
    await reconcileAssign(env, key);
    kube.writes = [];
    kube.setStatefulSet('ns', STS, 4);
    controller(kube);
    await reconcileAssign(env, key);
    expect(ops(kube)).toEqual(['replaceStatefulSetScale']);
    expect(kube.statefulSets.get(`ns/${STS}`)!.replicas).toBe(2);
    expect(configIn(kube).version).toBe(1);
  });

  it('before its StatefulSet exists: the first config is written for spec.replicas workers, and the pods created then find their shares', async () => {
    const { kube, env } = stubWorld(0, { replicas: 2 });
    kube.statefulSets.delete(`ns/${STS}`);
    const outcome = await reconcileAssign(env, key);
    expect(outcome).toMatchObject({ result: 'blocked', reason: 'StatefulSetNotFound', version: 1 });
    expect(ops(kube)).toEqual(['createConfigMap']);
    const first = configIn(kube);
    expect(Object.keys(first.workloads)).toEqual(workerNames(STS, 2));
    expect(Object.values(first.workloads).flatMap((w) => w.jobs).sort()).toEqual([...seedStreams].sort());
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Pending', version: 1 });
    // A repeat writes nothing; the StatefulSet created at the same size finds its config in force.
    kube.writes = [];
    await reconcileAssign(env, key);
    kube.setStatefulSet('ns', STS, 2);
    controller(kube);
    await settle(kube, env);
    expect(ops(kube)).toEqual([]);
    expect(configIn(kube)).toEqual(first);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', version: 1, readyReplicas: 2 });
  });

  it('before its StatefulSet exists: nothing is written without spec.replicas, or over a config already in force', async () => {
    const follows = stubWorld(0);
    follows.kube.statefulSets.delete(`ns/${STS}`);
    await reconcileAssign(follows.env, key);
    expect(ops(follows.kube)).toEqual([]);

    const { kube, env } = stubWorld(2, { replicas: 2 });
    await reconcileAssign(env, key);
    const inForce = configIn(kube);
    kube.statefulSets.delete(`ns/${STS}`);
    setDesired(kube, 3);
    kube.writes = [];
    await reconcileAssign(env, key);
    expect(ops(kube)).toEqual([]);
    expect(configIn(kube)).toEqual(inForce);
  });

  it('without spec.replicas, follows the StatefulSet and never resizes it', async () => {
    const { kube, env } = stubWorld(2);
    await reconcileAssign(env, key);
    kube.setStatefulSet('ns', STS, 3);
    controller(kube);
    await settle(kube, env);
    expect(Object.keys(configIn(kube).workloads)).toEqual(workerNames(STS, 3));
    expect(kube.writes.map((w) => w.op)).not.toContain('replaceStatefulSetScale');
    expect(kube.calls).not.toContain('getStatefulSetScale');
  });

  it('a resize that meets a concurrent one re-reads and decides again', async () => {
    const { kube, env } = stubWorld(2, { replicas: 2 });
    await reconcileAssign(env, key);
    setDesired(kube, 3);
    let raced = false;
    kube.beforeCall = (op) => {
      if (op === 'getStatefulSetScale' && !raced) {
        raced = true;
        kube.setStatefulSet('ns', STS, 3); // someone else grew it meanwhile
      }
    };
    await reconcileAssign(env, key);
    expect(raced).toBe(true);
    expect(kube.statefulSets.get(`ns/${STS}`)!.replicas).toBe(3);
    expect(kube.writes.filter((w) => w.op === 'replaceStatefulSetScale')).toEqual([]);
  });
});

describe("the StatefulSet's start ordinal is honoured end to end", () => {
  function worldFrom5(replicas: number, spec: Parameters<typeof swarmOf>[0] = {}) {
    const { kube, env } = stubWorld(0, spec);
    kube.setStatefulSet('ns', STS, replicas, 5);
    controller(kube, 5);
    return { kube, env };
  }

  it('shares, status and restarts name the pods that exist', async () => {
    const { kube, env } = worldFrom5(2, RESTART);
    await reconcileAssign(env, key);
    expect(Object.keys(configIn(kube).workloads)).toEqual(['swarm-worker-5', 'swarm-worker-6']);
    expect(kube.swarms.get('ns/swarm')!.status!.workers!.map((w) => w.name)).toEqual(['swarm-worker-5', 'swarm-worker-6']);

    kube.setStatefulSet('ns', STS, 3);
    controller(kube, 5);
    await reconcileAssign(env, key);
    expect(Object.keys(configIn(kube).workloads)).toEqual(['swarm-worker-5', 'swarm-worker-6', 'swarm-worker-7']);
    const steps = readRestarts(kube.configMaps.get('ns/swarm-worker-config')!.annotations).steps;
    // The losers, pinned by the write; the new worker's pod, pinned by the seal (the look confirming the status
    // write lists the pods after the config write: that pod may have mounted the config before it landed).
    expect(steps.map((s) => s.worker)).toEqual(['swarm-worker-5', 'swarm-worker-6', 'swarm-worker-7']);
    // They only lose jobs, to the new worker: no waits.
    expect(steps.every((s) => s.waitFor.length === 0)).toBe(true);
    const restarted: string[] = [];
    for (let round = 0; round < 6; round++) {
      restarted.push(...(await reconcileRestart(env, key)).restarted);
      controller(kube, 5);
      await reconcileAssign(env, key);
    }
    // The new worker last, to load the jobs published to it once its losers stopped them.
    expect(restarted).toEqual(['swarm-worker-5', 'swarm-worker-6', 'swarm-worker-7']);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', replicas: 3, readyReplicas: 3, uncoveredJobs: 0 });
  });

  it('spec.replicas grows and shrinks a StatefulSet that starts at 5', async () => {
    const { kube, env } = worldFrom5(2, { replicas: 3 });
    await settle(kube, env, 5);
    expect(Object.keys(configIn(kube).workloads)).toEqual(['swarm-worker-5', 'swarm-worker-6', 'swarm-worker-7']);
    expect(kube.statefulSets.get(`ns/${STS}`)!.replicas).toBe(3);
    setDesired(kube, 1);
    await settle(kube, env, 5);
    expect(Object.keys(configIn(kube).workloads)).toEqual(['swarm-worker-5']);
    expect([...kube.pods.values()].map((p) => p.name)).toEqual(['swarm-worker-5']);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', replicas: 1 });
  });

  it('status judges the workers from the start ordinal', () => {
    const status = computeStatus({
      swarm: swarmOf(),
      now: '2026-11-22T00:00:00Z',
      statefulSet: { name: STS, namespace: 'ns', uid: 'u', replicas: 2, startOrdinal: 5, labelSelector: `app=${STS}`, readyReplicas: 2, observedReplicas: 2 },
      config: configOver(['swarm-worker-5', 'swarm-worker-6']),
      pods: [pod('swarm-worker-5'), pod('swarm-worker-6')],
    });
    expect(status).toMatchObject({ phase: 'Running', replicas: 2, readyReplicas: 2, uncoveredJobs: 0, selector: `app=${STS}` });
    expect(status.workers!.map((w) => [w.name, w.coverage])).toEqual([
      ['swarm-worker-5', 'Inferred'],
      ['swarm-worker-6', 'Inferred'],
    ]);
  });
});

describe('restarts while the StatefulSet still has departing pods', () => {
  it('a departing pod (past spec.replicas) that is not Ready uses no maxUnavailable budget: it is leaving anyway', () => {
    // spec.replicas lowered to 2 while the StatefulSet still has 3 pods (its shrink not yet applied), a restart pending.
    const swarm = validSwarm(swarmOf({ replicas: 2, ...RESTART }));
    const workspace = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'uid-swarm-worker-0', waitFor: [] }] };
    const restarts = (pods: PodView[]) => decideRestarts({ swarm, statefulSet: { name: STS, replicas: 3 }, workspace, pods }).deletes.map((p) => p.name);
    expect(restarts([pod('swarm-worker-0'), pod('swarm-worker-1'), pod('swarm-worker-2', { ready: false })])).toEqual(['swarm-worker-0']);
    // A kept worker out of service does use it.
    expect(restarts([pod('swarm-worker-0'), pod('swarm-worker-1', { ready: false }), pod('swarm-worker-2')])).toEqual([]);
  });
});
