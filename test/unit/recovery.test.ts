// Recovery and truth in status, over plain data: versions never go backwards
// (a lost ConfigMap is recreated above the last version, every live pod
// restarted), the resync ping and ConfigMap events reach every Swarm they
// name, a rollout blocked past its deadline is Degraded naming the blocking
// pod, and workers that cannot acknowledge are inferred (Ready, no restart pending).
import type * as k8s from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { assignFunction } from '../../functions/assign/index.js';
import { boundedAll } from '../../lib/reconcilers/bounded.js';
import type { ValidSwarm } from '../../lib/api/types.js';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { computeCoverage, type WrittenAt } from '../../lib/decisions/coverage.js';
import { decideRestarts } from '../../lib/decisions/restarts.js';
import { decideScale } from '../../lib/decisions/scale.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { podsByWorker } from '../../lib/decisions/workers.js';
import { readLastChange, readRestarts } from '../../lib/decisions/workspace.js';
import { toTrigger } from '../../lib/events/trigger.js';
import { resyncPingEvent } from '../../lib/events/ping.js';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { podView } from '../../lib/kube/views.js';
import type { ConfigMapView, PodView } from '../../lib/kube/types.js';
import { createCoalescer } from '../../lib/reconcilers/shortcuts.js';
import { nextConfig, parse, render } from '../../lib/workerconfig/index.js';
import { seedStreams, silentLog, stubWorld, swarmOf } from '../support/fixtures.js';
import { acknowledgingLabels, converge, sts, validSwarm, workerPod } from '../support/views.js';

/** The workspace annotation of the last change (lib/decisions/workspace.ts). */
const ANNOTATION_LAST_CHANGE = 'k8slab.info/last-change';

const T = '2026-11-22T00:00:00Z';
const plus = (seconds: number, from = T) => new Date(Date.parse(from) + seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } as const;
/** A Swarm whose status recorded `version` as the last one published. */
const publishedAt = (version: number, spec: Parameters<typeof swarmOf>[0] = {}): ValidSwarm => ({ ...validSwarm(swarmOf(spec)), status: { version } });
const configMapWith = (text: string, annotations: Record<string, string> = {}): ConfigMapView => ({
  name: 'swarm-worker-config',
  namespace: 'ns',
  uid: 'cm-uid',
  resourceVersion: '9',
  labels: {},
  annotations,
  ownerReferences: [],
  data: { 'config.yml': text },
});

describe('versions never go backwards', () => {
  it('nextConfig: a config lost or older than the last published starts above it, every share new', () => {
    const assignment = { 'swarm-worker-0': ['a'], 'swarm-worker-1': ['b'] };
    expect(nextConfig(undefined, assignment).version).toBe(1);
    expect(nextConfig(undefined, assignment, { floor: 7 })).toEqual({ version: 8, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 8 }, 'swarm-worker-1': { jobs: ['b'], version: 8 } } });
    const handEdited = { version: 3, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 1 }, 'swarm-worker-1': { jobs: ['b'], version: 3 } } };
    expect(nextConfig(handEdited, assignment, { floor: 7 }).version).toBe(8);
    // Not behind the floor: only what changed is new, and nothing at all when nothing did.
    const current = { version: 9, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 2 }, 'swarm-worker-1': { jobs: ['b'], version: 9 } } };
    expect(nextConfig(current, assignment, { floor: 7 })).toBe(current);
  });

  it('a deleted ConfigMap is recreated at the last version + 1, and every worker with a live pod is restarted', () => {
    const d = converge(decideConfigMap({ swarm: publishedAt(5, RESTART), statefulSet: sts(3), configMap: undefined, pods: [workerPod(0), workerPod(1)], now: T }));
    expect(d.write).toBe('create');
    expect(d.config.version).toBe(6);
    expect(Object.values(d.config.workloads).map((w) => w.version)).toEqual([6, 6, 6]);
    const restarts = readRestarts(d.configMap.annotations);
    expect(restarts.version).toBe(6);
    expect(restarts.steps.map((s) => [s.worker, s.staleUid])).toEqual([
      ['swarm-worker-0', 'pod-0'],
      ['swarm-worker-1', 'pod-1'],
    ]);
    // The written time is recorded with the version; worker-2 had no pod to pin: a pod of it made before the write
    // landed is pinned once the pods are listed after it (unsealed).
    expect(readLastChange(d.configMap.annotations)).toMatchObject({ version: 6, at: T });
    expect(restarts.unsealed).toEqual(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
  });

  it('a pod made while the write was landing is pinned once the pods are listed after it; meanwhile nothing restarts or grows (seeds 6598, 1164)', () => {
    // Version 6 is decided from a list where swarm-worker-2 had no pod. Before it lands, a rolling update
    // replaces swarm-worker-0 and makes swarm-worker-2: both may have mounted the older (here: no) config.
    const written = converge(decideConfigMap({ swarm: publishedAt(5, RESTART), statefulSet: sts(3), configMap: undefined, pods: [workerPod(0), workerPod(1)], now: T }));
    const recorded = readRestarts(written.configMap.annotations);
    expect(recorded.unsealed).toEqual(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
    const swarm = publishedAt(6, RESTART);
    const early = decideRestarts({ swarm, statefulSet: sts(3), workspace: recorded, pods: [workerPod(0), workerPod(1)] });
    expect([early.deletes, early.waiting]).toEqual([[], 'assign is listing the pods after its write']);
    const grow = decideScale({ desired: 3, handoff: 'BreakBeforeMake', statefulSet: sts(2), jobs: [], config: written.config, workspace: recorded, pods: [], leases: [] });
    expect(grow).toMatchObject({ kind: 'none', waiting: expect.stringMatching(/listed after the config write/) });

    // The next look lists the pods after the write: the replacement and the new pod are pinned, worker-1 stays pinned.
    const configMap = { ...written.configMap, uid: 'cm-uid', resourceVersion: '10' };
    const listedAfter = [workerPod(0, { uid: 'pod-0b' }), workerPod(1), workerPod(2)];
    const sealed = converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap, pods: listedAfter, now: plus(1) }));
    const steps = readRestarts(sealed.configMap.annotations);
    expect(steps.unsealed).toBeUndefined();
    expect(steps.steps.map((s) => [s.worker, s.staleUid])).toEqual([
      ['swarm-worker-0', 'pod-0b'],
      ['swarm-worker-1', 'pod-1'],
      ['swarm-worker-2', 'pod-2'],
    ]);
    // Sealed: a pod made after that list read the new share, and its step is done.
    const after = { ...sealed.configMap, uid: 'cm-uid', resourceVersion: '11' };
    const later = converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: after, pods: [workerPod(0, { uid: 'pod-0c', startedAt: plus(30) }), workerPod(1), workerPod(2)], now: plus(40) }));
    expect(readRestarts(later.configMap.annotations).steps.map((s) => s.worker)).toEqual(['swarm-worker-1', 'swarm-worker-2']);
  });

  it('a garbled or hand-lowered config is replaced above max(last published, parsed)', () => {
    const garbled = converge(decideConfigMap({ swarm: publishedAt(5, RESTART), statefulSet: sts(2), configMap: configMapWith('workloads: [unclosed'), pods: [workerPod(0), workerPod(1)] }));
    expect(garbled.malformedPrevious).toBeDefined();
    expect(garbled.config.version).toBe(6);
    expect(readRestarts(garbled.configMap.annotations).steps).toHaveLength(2);

    const lowered = render({ version: 2, workloads: { 'swarm-worker-0': { jobs: seedStreams.slice(0, 14), version: 2 }, 'swarm-worker-1': { jobs: seedStreams.slice(14), version: 1 } } });
    const d = converge(decideConfigMap({ swarm: publishedAt(5, RESTART), statefulSet: sts(2), configMap: configMapWith(lowered), pods: [workerPod(0), workerPod(1)] }));
    expect(d.config.version).toBe(6);
    expect(readRestarts(d.configMap.annotations).steps.map((s) => s.worker)).toEqual(['swarm-worker-0', 'swarm-worker-1']);

    // A config ahead of status (status written after the ConfigMap) is simply in force.
    const ahead = render(parse(lowered));
    const fine = converge(decideConfigMap({ swarm: publishedAt(1, RESTART), statefulSet: sts(2), configMap: configMapWith(ahead), pods: [workerPod(0), workerPod(1)] }));
    expect(fine.config.version).toBe(2);
  });

  it('hot-reloading workers (policy None) get the higher version and no restarts', () => {
    const d = converge(decideConfigMap({ swarm: publishedAt(5, { restart: { policy: 'None' } }), statefulSet: sts(2), configMap: undefined, pods: [workerPod(0), workerPod(1)] }));
    expect(d.config.version).toBe(6);
    expect(readRestarts(d.configMap.annotations).steps).toEqual([]);
    expect(readLastChange(d.configMap.annotations)).not.toHaveProperty('unpinned');
  });

  it('status keeps the last version while no config is read (a problem), so the floor survives', () => {
    const swarm = { ...validSwarm(swarmOf()), status: { version: 5 } };
    const status = computeStatus({ swarm, now: T, problem: { reason: 'StatefulSetNotFound', message: 'gone' }, pods: [] });
    expect(status.version).toBe(5);
  });

  it('reconciling a Swarm whose ConfigMap was deleted recreates it above the version status recorded', async () => {
    const { kube, env } = stubWorld(2, RESTART);
    const fn = assignFunction(env, createCoalescer());
    const swarmEvent = toTrigger(apiServerEvent({ verb: 'add', mode: 'resource', object: kube.swarms.get('ns/swarm') as never }));
    await fn.handle(swarmEvent);
    expect(parse(kube.configFor('ns', 'swarm-worker-config')!).version).toBe(1);
    const deleted = kube.configMaps.get('ns/swarm-worker-config')!;
    kube.configMaps.delete('ns/swarm-worker-config');
    // The ConfigMap's own delete event names its Swarm (controller reference).
    const event = apiServerEvent({ verb: 'delete', mode: 'resource', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: deleted.name, namespace: 'ns', labels: deleted.labels, ownerReferences: deleted.ownerReferences } } });
    const out = await fn.handle(toTrigger(event));
    expect(out.summary.swarms).toMatchObject([{ swarm: 'ns/swarm', result: 'changed', version: 2 }]);
    expect(parse(kube.configFor('ns', 'swarm-worker-config')!).version).toBe(2);
    expect(readRestarts(kube.configMaps.get('ns/swarm-worker-config')!.annotations).steps.map((s) => s.worker)).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    expect(kube.swarms.get('ns/swarm')!.status?.version).toBe(2);
  });
});

describe('the resync ping', () => {
  it('reconciles every Swarm of the namespace it names, as if each had its own event', async () => {
    const { kube, env } = stubWorld(2);
    for (const name of ['b', 'c']) {
      kube.addSwarm(swarmOf({ statefulSetName: `pool-${name}`, configMapName: `pool-${name}-config` }, name));
      kube.setStatefulSet('ns', `pool-${name}`, 1);
    }
    kube.addSwarm(swarmOf({}, 'elsewhere', 'other'));
    const fn = assignFunction(env, createCoalescer());
    const out = await fn.handle(toTrigger(resyncPingEvent({ namespace: 'ns' })));
    expect((out.summary.swarms as Array<{ swarm: string; result: string }>).map((s) => [s.swarm, s.result]).sort()).toEqual([
      ['ns/b', 'changed'],
      ['ns/c', 'changed'],
      ['ns/swarm', 'changed'],
    ]);
    expect([...kube.configMaps.keys()].sort()).toEqual(['ns/pool-b-config', 'ns/pool-c-config', 'ns/swarm-worker-config']);
    // A second ping finds everything in place: no writes.
    const writes = kube.writes.length;
    await fn.handle(toTrigger(resyncPingEvent({ namespace: 'ns' })));
    expect(kube.writes.length).toBe(writes);
  });

  it('a ping for a namespace with no Swarms is a 2xx no-op after one list', async () => {
    const { kube, env } = stubWorld(1);
    const fn = assignFunction(env, createCoalescer());
    kube.calls.length = 0;
    const out = await fn.handle(toTrigger(resyncPingEvent({ namespace: 'empty' })));
    expect(out).toEqual({ status: 202, summary: { function: 'assign', swarms: [] } });
    expect(kube.calls).toEqual(['listSwarmNames']);
  });

  it('boundedAll runs every task, at most `limit` at once, and then reports the first failure', async () => {
    let running = 0;
    let peak = 0;
    const ran: number[] = [];
    const tasks = Array.from({ length: 10 }, (_, i) => async () => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 1));
      running -= 1;
      ran.push(i);
      if (i === 3) throw new Error('transient');
      return i;
    });
    await expect(boundedAll(tasks, 4)).rejects.toThrow('transient');
    expect(ran.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    expect(peak).toBe(4);
    expect(await boundedAll([async () => 1, async () => 2], 4)).toEqual([1, 2]);
  });
});

describe('the inference (workers that cannot acknowledge)', () => {
  it('a Ready pod with no restart pending runs its share, whenever it started; one with a restart pending does not', () => {
    // Every pod that may hold an older share is pinned for a restart (the seal included): start times vouch for
    // nothing (docs/design.md, "Coverage: acknowledged or inferred").
    const config = { version: 4, workloads: { 'swarm-worker-0': { jobs: ['a', 'b'], version: 4 }, 'swarm-worker-1': { jobs: ['c'], version: 2 } } };
    const run = (restartPending: Set<string>) =>
      computeCoverage({ jobs: ['a', 'b', 'c'], config, pods: podsByWorker('swarm-worker', 2, [workerPod(0, { startedAt: plus(-30) }), workerPod(1)]), leases: [], restartPending, lastChange: { version: 4, at: T } });
    const pending = run(new Set(['swarm-worker-0']));
    expect([pending.uncovered, pending.unverified, pending.workers.get('swarm-worker-0')]).toEqual([['a', 'b'], 1, { state: 'Uncovered' }]);
    const done = run(new Set());
    expect([done.uncovered, done.unverified]).toEqual([[], 3]);
  });
});

describe('a rollout blocked past its deadline is Degraded, naming the blocking pod', () => {
  const config = { version: 2, workloads: { 'swarm-worker-0': { jobs: seedStreams.slice(0, 14), version: 2 }, 'swarm-worker-1': { jobs: seedStreams.slice(14), version: 2 } } };
  const status = (now: string, pods: PodView[], over: { spec?: Parameters<typeof swarmOf>[0]; workspace?: ReturnType<typeof readRestarts>; lastChange?: WrittenAt } = {}) =>
    computeStatus({
      swarm: validSwarm(swarmOf(over.spec ?? {})),
      now,
      statefulSet: { ...sts(2), readyReplicas: pods.filter((p) => p.ready).length },
      config,
      pods,
      leases: [],
      ...(over.workspace ? { workspace: over.workspace } : {}),
      lastChange: over.lastChange ?? { version: 2, at: T },
    });
  const condition = (s: ReturnType<typeof computeStatus>, type: string) => s.conditions?.find((c) => c.type === type);
  const unschedulable = workerPod(1, { ready: false, phase: 'Pending', unschedulable: '0/3 nodes are available: 3 Insufficient cpu.', readinessChangedAt: T });

  it('Pending: Unschedulable, with the scheduler\'s message, after 600 s by default', () => {
    expect(status(plus(599), [workerPod(0), unschedulable]).phase).toBe('Pending');
    const stuck = status(plus(601), [workerPod(0), unschedulable]);
    expect(stuck.phase).toBe('Degraded');
    expect(condition(stuck, 'Degraded')).toMatchObject({ status: 'True', reason: 'RolloutStuck' });
    expect(condition(stuck, 'Degraded')?.message).toBe(
      `rollout of version 2 blocked for more than 600s: swarm-worker-1 pod is Pending: Unschedulable: 0/3 nodes are available: 3 Insufficient cpu., since ${T}`,
    );
    expect(condition(stuck, 'Progressing')).toMatchObject({ status: 'False', reason: 'RolloutStuck' });
    expect(condition(stuck, 'Ready')).toMatchObject({ status: 'False', reason: 'PodsNotReady' });
  });

  it('a container waiting (CrashLoopBackOff, ImagePullBackOff) or a pod not Ready, within the Swarm\'s own deadline', () => {
    const spec = { restart: { progressDeadlineSeconds: 60 } };
    const crashing = workerPod(1, { ready: false, phase: 'Running', waiting: { reason: 'CrashLoopBackOff', message: 'back-off 5m0s restarting failed container' }, readinessChangedAt: T });
    expect(condition(status(plus(61), [workerPod(0), crashing], { spec }), 'Degraded')?.message).toContain('swarm-worker-1 pod is waiting: CrashLoopBackOff (back-off 5m0s restarting failed container)');
    const pulling = workerPod(1, { ready: false, phase: 'Pending', waiting: { reason: 'ImagePullBackOff' }, readinessChangedAt: T });
    expect(condition(status(plus(61), [workerPod(0), pulling], { spec }), 'Degraded')?.message).toContain('swarm-worker-1 pod is waiting: ImagePullBackOff');
    const notReady = workerPod(1, { ready: false, phase: 'Running', readinessChangedAt: T });
    expect(condition(status(plus(61), [workerPod(0), notReady], { spec }), 'Degraded')?.message).toContain('swarm-worker-1 pod is not Ready');
    expect(status(plus(59), [workerPod(0), notReady], { spec }).phase).toBe('Pending');
  });

  it('a worker gone, a restart never done, a write never sealed, a worker never running its share: blocked since the version was written', () => {
    const missing = status(plus(601), [workerPod(0)]);
    expect(condition(missing, 'Degraded')?.message).toContain('swarm-worker-1 has no pod');
    const workspace = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'pod-0', waitFor: [] }] };
    expect(condition(status(plus(601), [workerPod(0), workerPod(1)], { workspace }), 'Degraded')?.message).toContain('swarm-worker-0 still runs an older share (restart pending)');
    // A write whose pods were never listed after it landed (unsealed): its workers may hold the older share.
    const unsealed = { version: 2, steps: [], unsealed: ['swarm-worker-1'] };
    expect(condition(status(plus(601), [workerPod(0), workerPod(1)], { workspace: unsealed }), 'Degraded')?.message).toContain(
      'swarm-worker-1 still runs an older share (restart pending)',
    );
    // A worker never running its share is one that acknowledges and has not: one that cannot is inferred
    // once Ready with no restart pending (every pod that may hold an older share is pinned).
    const silent = workerPod(1, { labels: acknowledgingLabels });
    expect(condition(status(plus(601), [workerPod(0), silent]), 'Degraded')?.message).toContain('swarm-worker-1 has not acknowledged its share of version 2');
  });

  it('names the most fundamental blocker first: a pod out of service before the workers waiting for it', () => {
    const workspace = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'pod-0', waitFor: ['swarm-worker-1'] }] };
    const message = condition(status(plus(601), [workerPod(0), unschedulable], { workspace }), 'Degraded')?.message ?? '';
    expect(message).toMatch(/: swarm-worker-1 pod is Pending: Unschedulable.*\(1 more worker\(s\) blocked: swarm-worker-0\)$/);
  });

  it('a long rollout that keeps moving is not stuck: the deadline counts from its last observed progress', () => {
    const workspace = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'pod-0', waitFor: ['swarm-worker-1'] }] };
    const justReplaced = workerPod(1, { uid: 'pod-1b', creationTimestamp: plus(500), readinessChangedAt: plus(520) });
    expect(status(plus(700), [workerPod(0), justReplaced], { workspace }).phase).toBe('Updating');
    expect(condition(status(plus(1200), [workerPod(0), justReplaced], { workspace }), 'Degraded')?.message).toContain(`swarm-worker-0 still runs an older share (restart pending), since ${plus(520)}`);
  });

  it('counts only from observed times: a pod failing long after the rollout gets its own deadline; no time, no verdict', () => {
    const lateFailure = workerPod(1, { ready: false, phase: 'Running', readinessChangedAt: plus(3600) });
    expect(status(plus(3700), [workerPod(0), lateFailure]).phase).toBe('Pending');
    expect(status(plus(4300), [workerPod(0), lateFailure]).phase).toBe('Degraded');
    // Not Ready with no readiness change seen, a restart pending, a worker with no pod: without the version's write time, no deadline.
    const workspace = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'pod-0', waitFor: [] }] };
    expect(status(plus(86_400), [workerPod(0, { ready: false })], { workspace, lastChange: { version: 2 } }).phase).not.toBe('Degraded');
    expect(status(plus(86_400), [workerPod(0, { ready: false })], { workspace }).phase).toBe('Degraded'); // the same, with the write time
  });

  it('a converged Swarm is never RolloutStuck, however old its version', () => {
    expect(status(plus(86_400), [workerPod(0), workerPod(1)]).phase).toBe('Running');
  });
});

describe('observed data behind it', () => {
  it('the last-change annotation records when the version was written, and reads the older form too', () => {
    expect(readLastChange({ [ANNOTATION_LAST_CHANGE]: JSON.stringify({ version: 3, movedTotal: 0, moves: [] }) })).toEqual({ version: 3, movedTotal: 0, moves: [] });
    expect(readLastChange({ [ANNOTATION_LAST_CHANGE]: JSON.stringify({ version: 3, at: 'yesterday', unpinned: 'x', movedTotal: 0, moves: [] }) })).toEqual({ version: 3, movedTotal: 0, moves: [] });
    expect(readLastChange({ [ANNOTATION_LAST_CHANGE]: JSON.stringify({ version: 3, at: T, movedTotal: 0, moves: [] }) })).toEqual({ version: 3, at: T, movedTotal: 0, moves: [] });
    // An annotation written before the seal replaced the start-time inference: its `unpinned` is dropped, not trusted.
    expect(readLastChange({ [ANNOTATION_LAST_CHANGE]: JSON.stringify({ version: 3, at: T, unpinned: ['w-1'], movedTotal: 0, moves: [] }) })).toEqual({ version: 3, at: T, movedTotal: 0, moves: [] });
  });

  it('podView reads phase, the scheduler\'s refusal, a waiting container, the latest container start and the readiness change', () => {
    const at = new Date(T);
    const pending: k8s.V1Pod = {
      metadata: { name: 'swarm-worker-1', namespace: 'ns', uid: 'u', creationTimestamp: at },
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available', lastTransitionTime: at }],
      },
    };
    expect(podView(pending)).toMatchObject({ phase: 'Pending', unschedulable: '0/3 nodes are available', readinessChangedAt: T });
    const running: k8s.V1Pod = {
      metadata: { name: 'swarm-worker-1', namespace: 'ns', uid: 'u' },
      status: {
        phase: 'Running',
        conditions: [{ type: 'PodScheduled', status: 'True', lastTransitionTime: at }, { type: 'Ready', status: 'False', lastTransitionTime: new Date(plus(9)) }],
        containerStatuses: [
          { name: 'a', image: 'i', imageID: '', ready: true, restartCount: 0, state: { running: { startedAt: new Date(plus(3)) } } },
          { name: 'b', image: 'i', imageID: '', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff', message: 'back-off' } } },
        ],
      },
    };
    const view = podView(running);
    expect(view).toMatchObject({ phase: 'Running', waiting: { reason: 'CrashLoopBackOff', message: 'back-off' }, readinessChangedAt: plus(9) });
    // Not every container runs: no start time for the pod.
    expect(view).not.toHaveProperty('startedAt');
    expect(view).not.toHaveProperty('unschedulable');
    const both: k8s.V1Pod = { ...running, status: { ...running.status, containerStatuses: [running.status!.containerStatuses![0]!, { ...running.status!.containerStatuses![0]!, name: 'b', state: { running: { startedAt: new Date(plus(7)) } } }] } };
    expect(podView(both).startedAt).toBe(plus(7));
    // The earliest start too: what any container wrote before it belongs to an earlier run of every one.
    expect(podView(both).restartedAllAt).toBe(plus(3));
  });

  it('a reconcile records the time its version was written, from the env clock', async () => {
    const { kube, env } = stubWorld(2, {}, silentLog);
    await assignFunction(env, createCoalescer()).handle(toTrigger(resyncPingEvent({ namespace: 'ns' })));
    expect(readLastChange(kube.configMaps.get('ns/swarm-worker-config')!.annotations)).toMatchObject({ version: 1, at: T });
  });
});
