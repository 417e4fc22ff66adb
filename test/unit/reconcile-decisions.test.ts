// The pure decisions behind the functions: desired ConfigMap, restart plan, status.
import { describe, expect, it } from 'vitest';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { decideRestarts } from '../../lib/decisions/restarts.js';
import { conditionEvents } from '../../lib/decisions/condition-events.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { readRestarts, readLastChange } from '../../lib/decisions/workspace.js';
import type { ConfigMapView, PodView } from '../../lib/kube/types.js';
import { parse } from '../../lib/workerconfig/index.js';
import { seedStreams, swarmOf } from '../support/fixtures.js';
import { converge, incarnations, sealed, sts, validSwarm, written } from '../support/views.js';

/** The restart bookkeeping's annotation on the ConfigMap (lib/decisions/workspace.ts). */
const ANNOTATION_RESTARTS = 'k8slab.info/restarts';

/** A worker pod; each call a new incarnation. */
const pod = incarnations();
/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { policy: 'Restart', handoff: 'BreakBeforeMake' } as const;

describe('decideConfigMap', () => {
  const swarm = validSwarm(swarmOf({ restart: RESTART }));

  it('creates the first assignment at version 1, owned by the Swarm, every stream once', () => {
    const d = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [pod(0), pod(1)] }));
    expect(d.write).toBe('create');
    expect(d.config.version).toBe(1);
    expect(d.configMap.ownerReferences).toEqual([{ apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', name: 'swarm', uid: 'swarm-uid', controller: true }]);
    const config = parse(d.configMap.data['config.yml']!);
    const all = Object.values(config.workloads).flatMap((w) => w.jobs);
    expect(all.slice().sort()).toEqual(seedStreams.slice().sort());
    expect(Object.keys(config.workloads).sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    // A first assignment pins nobody: every pod listed is either new or about to read it. Its workers are unsealed:
    // the next look, listing the pods after the write, pins any pod it cannot tell from one made while it landed.
    expect(readRestarts(d.configMap.annotations)).toEqual({ version: 1, steps: [], unsealed: ['swarm-worker-0', 'swarm-worker-1'] });
  });

  it('decides no write when the ConfigMap already holds the decision (a no-op event)', () => {
    const pods = [pod(0), pod(1)];
    const first = decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods });
    // The look after the write first seals it (its workers were unsealed): one update of the bookkeeping only.
    const seal = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: written(first), pods }));
    expect([seal.write, seal.changed]).toEqual(['update', false]);
    const again = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: written(seal), pods }));
    expect(again.write).toBe('none');
    expect(again.changed).toBe(false);
  });

  it('on a resize pins each changed worker to the uid of the pod holding the older share', () => {
    const pods = [pod(0), pod(1)];
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods }));
    const d = converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: first, pods }));
    expect(d.write).toBe('update');
    expect(d.config.version).toBe(2);
    expect(d.changedWorkers.sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    const steps = readRestarts(d.configMap.annotations).steps;
    expect(steps.map((s) => s.worker).sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    for (const s of steps) expect(s.staleUid).toBe(pods.find((p) => p.name === s.worker)!.uid);
    // Both only lose jobs, to a new worker (the StatefulSet creates it with its share): neither waits.
    for (const s of steps) expect(s.waitFor).toEqual([]);
    // 27 over 3 = 9 each: exactly 9 jobs move to the new worker (the lower bound).
    expect(readLastChange(d.configMap.annotations)).toMatchObject({ version: 2, movedTotal: 9 });
  });

  it('writes no restart bookkeeping for hot-reloading workers (policy None)', () => {
    const none = validSwarm(swarmOf({ restart: { policy: 'None' } }));
    const first = written(decideConfigMap({ swarm: none, statefulSet: sts(2), configMap: undefined, pods: [pod(0), pod(1)] }));
    const d = converge(decideConfigMap({ swarm: none, statefulSet: sts(3), configMap: first, pods: [pod(0), pod(1)] }));
    expect(d.changed).toBe(true);
    expect(d.configMap.annotations[ANNOTATION_RESTARTS]).toBeUndefined();
  });

  it('refuses a ConfigMap controlled by something else', () => {
    const foreign: ConfigMapView = {
      name: 'swarm-worker-config',
      namespace: 'ns',
      resourceVersion: '3',
      labels: {},
      annotations: {},
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'Deployment', name: 'other', uid: 'x', controller: true }],
      data: {},
    };
    const d = decideConfigMap({ swarm, statefulSet: sts(2), configMap: foreign, pods: [] });
    expect(d).toMatchObject({ kind: 'blocked', reason: 'ConfigMapConflict' });
  });

  it('adopts a placeholder ConfigMap and keeps its other keys and owners in place', () => {
    const placeholder: ConfigMapView = {
      name: 'swarm-worker-config',
      namespace: 'ns',
      resourceVersion: '3',
      labels: { team: 'video' },
      annotations: {},
      ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: 'ns', uid: 'ns-uid' }],
      data: { 'config.yml': '', 'other.txt': 'keep me' },
    };
    const d = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: placeholder, pods: [] }));
    expect(d.write).toBe('update');
    expect(d.config.version).toBe(1);
    expect(d.configMap.data['other.txt']).toBe('keep me');
    expect(d.configMap.labels.team).toBe('video');
    expect(d.configMap.ownerReferences.map((o) => o.kind)).toEqual(['Namespace', 'Swarm']);
    // Once sealed (the look after the write), nothing more to write.
    const again = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: sealed(d, { swarm, statefulSet: sts(2), pods: [] }), pods: [] }));
    expect(again.write).toBe('none');
  });

  it('replaces a malformed config and says so', () => {
    const broken: ConfigMapView = {
      name: 'swarm-worker-config',
      namespace: 'ns',
      resourceVersion: '3',
      labels: {},
      annotations: {},
      ownerReferences: [],
      data: { 'config.yml': 'workloads: [not, a, map' },
    };
    const d = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: broken, pods: [] }));
    expect(d.malformedPrevious).toBeTruthy();
    expect(d.write).toBe('update');
  });
});

describe('decideRestarts', () => {
  const swarm = validSwarm(swarmOf({ restart: RESTART }));
  const scaleUp = () => {
    const pods = [pod(0), pod(1)];
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods }));
    // Sealed by the look after the write (nothing restarts before): no pod was made meanwhile.
    const second = sealed(decideConfigMap({ swarm, statefulSet: sts(3), configMap: first, pods }), { swarm, statefulSet: sts(3), pods });
    return { pods, cm: second, workspace: readRestarts(second.annotations) };
  };

  it('restarts a gainer once its losers are restarted and Ready (pods that do not acknowledge)', () => {
    const three = validSwarm(swarmOf({ jobs: seedStreams, restart: { ...RESTART, maxUnavailable: 3 } }));
    const pods = [pod(0), pod(1), pod(2)];
    const first = written(decideConfigMap({ swarm: three, statefulSet: sts(3), configMap: undefined, pods }));
    // worker-1's jobs removed: it gains jobs from worker-0 and worker-2.
    const gone = new Set(parse(first.data['config.yml']!).workloads['swarm-worker-1']!.jobs);
    const fewer = validSwarm(swarmOf({ jobs: seedStreams.filter((j) => !gone.has(j)), restart: { ...RESTART, maxUnavailable: 3 } }));
    const workspace = readRestarts(sealed(decideConfigMap({ swarm: fewer, statefulSet: sts(3), configMap: first, pods }), { swarm: fewer, statefulSet: sts(3), pods }).annotations);
    expect(workspace.steps.map((s) => [s.worker, s.waitFor])).toEqual([
      ['swarm-worker-0', []],
      ['swarm-worker-2', []],
      ['swarm-worker-1', ['swarm-worker-0', 'swarm-worker-2']],
    ]);
    const losersFirst = decideRestarts({ swarm: fewer, statefulSet: sts(3), workspace, pods });
    expect(losersFirst.deletes.map((p) => p.name)).toEqual(['swarm-worker-0', 'swarm-worker-2']);
    expect(losersFirst.waiting).toMatch(/swarm-worker-1 waits for swarm-worker-0, swarm-worker-2/);
    // Restarted, not yet Ready: the gainer still waits.
    const starting = [pod(0, { ready: false }), pods[1]!, pod(2, { ready: false })];
    expect(decideRestarts({ swarm: fewer, statefulSet: sts(3), workspace, pods: starting }).deletes).toEqual([]);
    const ready = [pod(0), pods[1]!, pod(2)];
    expect(decideRestarts({ swarm: fewer, statefulSet: sts(3), workspace, pods: ready }).deletes.map((p) => p.name)).toEqual(['swarm-worker-1']);
  });

  it('does not wait for a worker the pool does not have yet: its pod comes with the scale-up that waits for this restart (seed 1542)', () => {
    // spec.replicas 2 → 4 under BreakBeforeMake: the StatefulSet grows only once the recorded restarts are done
    // (scale.ts), and worker-0's restart waits for the losers, two of which have no pod until then.
    const grown = validSwarm(swarmOf({ replicas: 4, restart: RESTART }));
    const pods = [pod(0), pod(1)];
    const workspace = { version: 7, steps: [{ worker: 'swarm-worker-0', staleUid: pods[0]!.uid, waitFor: ['swarm-worker-1', 'swarm-worker-2', 'swarm-worker-3'] }] };
    const free = decideRestarts({ swarm: grown, statefulSet: sts(2), workspace, pods });
    expect([free.deletes.map((p) => p.name), free.waiting]).toEqual([['swarm-worker-0'], '']);
    // A pod of that name still departing (a shrink under way) may run the older share: waited for.
    const departing = decideRestarts({ swarm: grown, statefulSet: sts(2), workspace, pods: [...pods, pod(2, { terminating: true })] });
    expect(departing.deletes).toEqual([]);
    expect(departing.waiting).toMatch(/swarm-worker-0 waits for swarm-worker-2/);
  });

  it('never deletes more than maxUnavailable, counting pods already out of service', () => {
    const { pods, workspace } = scaleUp();
    const two = validSwarm(swarmOf({ restart: { ...RESTART, maxUnavailable: 2 } }));
    expect(decideRestarts({ swarm: two, statefulSet: sts(3), workspace, pods: [...pods, pod(2)] }).deletes).toHaveLength(2);
    const terminating = pods.map((p, i) => (i === 0 ? { ...p, terminating: true } : p));
    const d = decideRestarts({ swarm, statefulSet: sts(3), workspace, pods: [...terminating, pod(2)] });
    expect(d.deletes).toEqual([]);
    expect(d.waiting).toMatch(/swarm-worker-0 restarting/);
  });

  it('never restarts a pod that started after its share was written; assign forgets finished steps', () => {
    const { pods, cm, workspace } = scaleUp();
    /** The workers whose restart is still pending in what assign writes next. */
    const stillPending = (observed: PodView[]) =>
      readRestarts(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: observed })).configMap.annotations).steps.map((s) => s.worker);
    const replaced = [pod(0), pods[1]!, pod(2)]; // worker-0 came back with a new uid
    const d = decideRestarts({ swarm, statefulSet: sts(3), workspace, pods: replaced });
    expect(d.deletes.map((p) => p.name)).toEqual(['swarm-worker-1']);
    expect(stillPending(replaced)).toEqual(['swarm-worker-1']);
    const allNew = decideRestarts({ swarm, statefulSet: sts(3), workspace, pods: [pod(0), pod(1), pod(2)] });
    expect(allNew.deletes).toEqual([]);
    expect(allNew.outstanding).toEqual([]);
    // The losers restarted: the jobs that awaited the new worker are published to it now, so it
    // (which started with none) is pinned for one restart to load them.
    expect(stillPending([pod(0), pod(1), pod(2)])).toEqual(['swarm-worker-2']);
  });

  it('break-before-make restarts the losers without waiting for gainers', () => {
    const bbm = validSwarm(swarmOf({ restart: { ...RESTART, maxUnavailable: 3 } }));
    const pods = [pod(0), pod(1)];
    const first = written(decideConfigMap({ swarm: bbm, statefulSet: sts(2), configMap: undefined, pods }));
    const ws = readRestarts(sealed(decideConfigMap({ swarm: bbm, statefulSet: sts(3), configMap: first, pods }), { swarm: bbm, statefulSet: sts(3), pods }).annotations);
    const d = decideRestarts({ swarm: bbm, statefulSet: sts(3), workspace: ws, pods: [...pods, pod(2, { ready: false })] });
    expect(d.deletes.map((p) => p.name).sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);
  });
});

describe('computeStatus', () => {
  // The spec asks for exactly the jobs of the config below (jobs it lacks would be uncovered).
  const swarm = validSwarm(swarmOf({ jobs: ['a', 'b'] }));
  const now = '2026-11-22T00:00:00Z';
  const config = parse('version: 3\nworkloads:\n  swarm-worker-0:\n    jobs: [a]\n    version: 3\n  swarm-worker-1:\n    jobs: [b]\n    version: 2\n');

  it('is Running and Ready when every worker is ready and nothing is pending', () => {
    const s = computeStatus({ swarm, now, statefulSet: sts(2), config, pods: [pod(0), pod(1)] });
    expect(s).toMatchObject({ phase: 'Running', replicas: 2, readyReplicas: 2, version: 3, observedGeneration: 1 });
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Converged' });
    expect(s.workers).toEqual([
      { name: 'swarm-worker-0', jobs: 1, version: 3, restartPending: false, coverage: 'Inferred' },
      { name: 'swarm-worker-1', jobs: 1, version: 2, restartPending: false, coverage: 'Inferred' },
    ]);
    expect(s).toMatchObject({ uncoveredJobs: 0, unverifiedJobs: 2 });
  });

  it('is Pending until the pods exist, Updating while restarts are pending', () => {
    expect(computeStatus({ swarm, now, statefulSet: sts(2), config, pods: [pod(0)] }).phase).toBe('Pending');
    const p0 = pod(0);
    const workspace = { version: 3, steps: [{ worker: 'swarm-worker-0', staleUid: p0.uid, waitFor: [] }] };
    const s = computeStatus({ swarm, now, statefulSet: sts(2), config, workspace, pods: [p0, pod(1)] });
    expect(s.phase).toBe('Updating');
    expect(s.workers?.[0]?.restartPending).toBe(true);
  });

  it('reports an invalid spec as Ready=False/InvalidSpec and Degraded', () => {
    const s = computeStatus({ swarm, now, problem: { reason: 'InvalidSpec', message: 'bad' }, pods: [] });
    expect(s.phase).toBe('Degraded');
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'InvalidSpec' });
  });

  it('keeps lastTransitionTime while a condition keeps its status, and emits events only on change', () => {
    const first = computeStatus({ swarm, now, statefulSet: sts(2), config, pods: [pod(0), pod(1)] });
    const later = computeStatus({ swarm: { ...swarm, status: first }, now: '2026-11-22T01:00:00Z', statefulSet: sts(2), config, pods: [pod(0), pod(1)] });
    expect(later).toEqual(first);
    expect(conditionEvents(first.conditions, later.conditions ?? [])).toEqual([]);
    const broken = computeStatus({ swarm: { ...swarm, status: first }, now: '2026-11-22T02:00:00Z', problem: { reason: 'InvalidSpec', message: 'bad' }, pods: [] });
    const events = conditionEvents(first.conditions, broken.conditions ?? []);
    expect(events.map((e) => `${e.type}/${e.reason}`)).toEqual(['Warning/InvalidSpec', 'Warning/InvalidSpec']);
    expect(broken.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime).toBe('2026-11-22T02:00:00Z');
  });
});

describe('computeStatus before the first assignment', () => {
  it('is not Ready while no worker config exists, even with every pod Ready', () => {
    const swarm = validSwarm(swarmOf());
    const s = computeStatus({ swarm, now: '2026-11-22T00:00:00Z', statefulSet: sts(2), pods: [pod(0), pod(1)] });
    expect(s.phase).toBe('Pending');
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'AwaitingAssignment' });
  });
});
