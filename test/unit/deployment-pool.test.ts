// Deployment pools as pure decisions: who the workers are (deploymentWorkers),
// a replaced pod's share moving wholesale to its replacement, make-before-break
// through the acknowledgements, the schema's rules, and the resize decision.
import { describe, expect, it } from 'vitest';
import type { Swarm } from '../../lib/api/types.js';
import { validateSwarm } from '../../lib/api/validate.js';
import { assign } from '../../lib/assignment/assign.js';
import { deploymentWorkers, type PoolPod } from '../../lib/assignment/workers.js';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { decideScale } from '../../lib/decisions/scale.js';
import { computeStatus } from '../../lib/decisions/status.js';
import type { ConfigMapView, DeploymentView, LeaseView, PodView } from '../../lib/kube/types.js';
import { deploymentView } from '../../lib/kube/views.js';
import type { WorkerConfig } from '../../lib/workerconfig/index.js';
import { holdsJobs } from '../../sdk/typescript/src/drain.js';
import { apiServerEvent, toTrigger, type KubeObject } from '../../lib/events/index.js';
import { targetsFor } from '../../lib/reconcilers/keys.js';
import { parse } from '../../lib/workerconfig/index.js';
import { MemoryKube } from '../support/memory-kube.js';
import { silentLog, swarmOf } from '../support/fixtures.js';
import { acknowledgement, acknowledgingLabels, configOf, converge, runs, validSwarm, written } from '../support/views.js';

const jobs = Array.from({ length: 27 }, (_, i) => `stream:${i}`);

const deployment = (replicas: number): DeploymentView => ({ kind: 'Deployment', name: 'swarm-worker', namespace: 'ns', uid: 'deploy-uid', replicas, labelSelector: 'app=swarm-worker' });

/** A Ready pod of Deployment swarm-worker, ReplicaSet hash `hash`, created at second `second`. */
function deployPod(suffix: string, second: number, over: Partial<PodView> = {}, hash = 'aaa'): PodView {
  return {
    name: `swarm-worker-${hash}-${suffix}`,
    namespace: 'ns',
    uid: `uid-${hash}-${suffix}`,
    resourceVersion: '1',
    creationTimestamp: `2026-01-01T00:00:${String(second).padStart(2, '0')}Z`,
    ready: true,
    terminating: false,
    labels: { ...acknowledgingLabels, 'pod-template-hash': hash },
    ownerReplicaSet: `swarm-worker-${hash}`,
    ...over,
  };
}

function deploymentSwarm(spec: Partial<Swarm['spec']> = {}): Swarm {
  const s = swarmOf({ jobs, restart: { policy: 'None' }, ...spec });
  const { statefulSetName: _ignored, ...rest } = s.spec;
  return { ...s, spec: { ...rest, deploymentName: 'swarm-worker' } };
}

const swarm = validSwarm(deploymentSwarm());

/** One reconcile: the ConfigMap as written after it, and the decision. */
function reconcile(configMap: ConfigMapView | undefined, pods: PodView[], leases: LeaseView[], replicas = 3) {
  const d = converge(decideConfigMap({ swarm, statefulSet: deployment(replicas), configMap, pods, leases }));
  return { d, cm: d.write === 'none' && configMap ? configMap : written(d) };
}

const pool = (p: PodView): PoolPod => p;
const sharesOf = (config: WorkerConfig) => Object.fromEntries(Object.entries(config.workloads).map(([w, s]) => [w, s.jobs.length]));
const ownersOf = (config: WorkerConfig, job: string) => Object.entries(config.workloads).filter(([, s]) => s.jobs.includes(job)).map(([w]) => w);

describe('deploymentWorkers: who a Deployment pool\'s workers are', () => {
  const a = deployPod('a', 1);
  const b = deployPod('b', 2);
  const c = deployPod('c', 3);

  it('first assignment: the oldest pods, creation time then name', () => {
    expect(deploymentWorkers([], [c, a, b].map(pool), 2).workers).toEqual([a.name, b.name]);
  });

  it('a rolling update\'s surge pod gets no place until one frees up, then inherits it', () => {
    const surge = deployPod('d', 9, {}, 'bbb');
    const full = deploymentWorkers([a.name, b.name, c.name], [a, b, c, surge].map(pool), 3);
    expect(full.workers).toEqual([a.name, b.name, c.name]);
    const freed = deploymentWorkers([a.name, b.name, c.name], [{ ...a, terminating: true }, b, c, surge].map(pool), 3);
    expect(freed.workers).toEqual([b.name, c.name, surge.name]);
    expect([...freed.successors]).toEqual([[a.name, surge.name]]);
  });

  it('a terminating pod with no replacement yet keeps its place (its share waits for the replacement); a gone one before a terminating one is replaced', () => {
    const held = deploymentWorkers([a.name, b.name, c.name], [{ ...a, terminating: true }, b].map(pool), 3);
    expect(held.workers.sort()).toEqual([a.name, b.name, c.name].sort());
    const replacement = deployPod('e', 9);
    const one = deploymentWorkers([a.name, b.name, c.name], [{ ...a, terminating: true }, b, replacement].map(pool), 3);
    expect([...one.successors]).toEqual([[c.name, replacement.name]]);
  });

  it('live workers stay above the count (the Deployment picks who leaves); departing ones leave once terminating', () => {
    expect(deploymentWorkers([a.name, b.name, c.name], [a, b, c].map(pool), 2).workers).toEqual([a.name, b.name, c.name]);
    expect(deploymentWorkers([a.name, b.name, c.name], [a, { ...b, terminating: true }, c].map(pool), 2).workers).toEqual([a.name, c.name]);
  });

  it('a scale-up seen pod by pod while the Deployment is still creating pods: new pods wait until there are enough for every place', () => {
    const d = deployPod('d', 9);
    const e = deployPod('e', 9);
    const creating = true;
    expect(deploymentWorkers([a.name, b.name, c.name], [a, b, c, d].map(pool), 5, creating).workers).toEqual([a.name, b.name, c.name]);
    expect(deploymentWorkers([a.name, b.name, c.name], [a, b, c, d, e].map(pool), 5, creating).workers).toEqual([a.name, b.name, c.name, d.name, e.name]);
    // Not creating (it will not make more, or is not asked to): the pods there are fill what they can.
    expect(deploymentWorkers([a.name, b.name, c.name], [a, b, c, d].map(pool), 5).workers).toEqual([a.name, b.name, c.name, d.name]);
    // A departed worker's place is taken at once all the same: its share must not wait.
    const replaced = deploymentWorkers([a.name, b.name, c.name], [{ ...a, terminating: true }, b, c, d].map(pool), 5, creating);
    expect([...replaced.successors]).toEqual([[a.name, d.name]]);
    expect(replaced.workers).toEqual([b.name, c.name, d.name]);
  });

  it('deterministic: the same previous workers and pods in any order give the same answer', () => {
    const d = deployPod('d', 9);
    const one = deploymentWorkers([a.name, c.name, b.name], [{ ...b, terminating: true }, d, a, c].map(pool), 3);
    const two = deploymentWorkers([b.name, a.name, c.name], [c, a, d, { ...b, terminating: true }].map(pool), 3);
    expect(one).toEqual(two);
  });

  it('the assigner over listed workers: exact balance, keyed by pod name', () => {
    const r = assign({ statefulSetName: 'swarm-worker', replicas: 3, workers: [a.name, b.name, c.name], jobs });
    expect(Object.keys(r.assignment).sort()).toEqual([a.name, b.name, c.name].sort());
    expect(Object.values(r.assignment).map((j) => j.length)).toEqual([9, 9, 9]);
  });
});

describe('a Deployment pool scaled up with `kubectl scale deployment`', () => {
  const [a, b, c, d, e] = ['a', 'b', 'c', 'd', 'e'].map((s, i) => deployPod(s, i + 1));
  const at = (replicas: number, observedReplicas: number, over: Partial<DeploymentView> = {}): DeploymentView => ({ ...deployment(replicas), observedReplicas, ...over });
  const decide = (pool: DeploymentView, configMap: ConfigMapView | undefined, pods: PodView[]) =>
    converge(decideConfigMap({ swarm, statefulSet: pool, configMap, pods, leases: [] }));

  it('is assigned once, when its controller has created every pod, not once per pod', () => {
    const v1 = written(decide(at(3, 3), undefined, [a!, b!, c!]));
    // 3 → 5: the first new pod exists, the second not yet (the Deployment reports 3 of 5).
    expect(decide(at(5, 3), v1, [a!, b!, c!, d!]).write).toBe('none');
    const both = decide(at(5, 3), v1, [a!, b!, c!, d!, e!]);
    expect(Object.keys(configOf(written(both)).workloads).sort()).toEqual([a!, b!, c!, d!, e!].map((p) => p.name).sort());
    expect(both.moves).toHaveLength(10);
  });

  it('the Deployment view carries status.replicas and a True ReplicaFailure condition\'s message', () => {
    const view = deploymentView({
      metadata: { name: 'swarm-worker', namespace: 'ns', uid: 'u' },
      spec: { replicas: 5, selector: { matchLabels: { app: 'swarm-worker' } }, template: {} },
      status: { replicas: 4, conditions: [{ type: 'ReplicaFailure', status: 'True', reason: 'FailedCreate', message: 'exceeded quota' }] },
    });
    expect(view).toMatchObject({ replicas: 5, observedReplicas: 4, replicaFailure: 'exceeded quota' });
    expect(deploymentView({ spec: { selector: {}, template: {} }, status: { conditions: [{ type: 'ReplicaFailure', status: 'False' }] } }).replicaFailure).toBeUndefined();
  });

  it('a Deployment that cannot create more (ReplicaFailure, say a quota) gives a share to the pods it has', () => {
    const v1 = written(decide(at(3, 3), undefined, [a!, b!, c!]));
    const stuck = decide(at(5, 4, { replicaFailure: 'exceeded quota' }), v1, [a!, b!, c!, d!]);
    expect(Object.keys(configOf(written(stuck)).workloads)).toContain(d!.name);
  });
});

describe('a Deployment pool, make-before-break through the acknowledgements', () => {
  const a = deployPod('a', 1);
  const b = deployPod('b', 2);
  const c = deployPod('c', 3);

  function converged() {
    const first = reconcile(undefined, [a, b, c], []);
    const v1 = configOf(first.cm);
    return { cm: first.cm, v1, leases: [a, b, c].map((p) => runs(p, v1)) };
  }

  it('first assignment over the pods by name, 9 each', () => {
    const { v1 } = converged();
    expect(sharesOf(v1)).toEqual({ [a.name]: 9, [b.name]: 9, [c.name]: 9 });
  });

  it('a replaced pod (rolling update): its whole share goes to its replacement, the old pod keeps it (releasing) until the new one acknowledges, then loses it', () => {
    const { cm, v1, leases } = converged();
    const surge = deployPod('d', 9, {}, 'bbb');
    // The surge pod exists before any old one terminates: no share, nothing moves.
    const surged = reconcile(cm, [a, b, c, surge], leases);
    expect(surged.d.changed).toBe(false);

    const going = { ...a, terminating: true };
    const handing = reconcile(cm, [going, b, c, surge], leases);
    const v2 = configOf(handing.cm);
    expect(handing.d.moves.every((m) => m.from === a.name && m.to === surge.name)).toBe(true);
    expect(handing.d.moves).toHaveLength(9);
    expect(v2.workloads[surge.name]?.jobs).toEqual(v1.workloads[a.name]?.jobs);
    expect(v2.workloads[a.name]?.releasing).toEqual(v1.workloads[a.name]?.jobs);
    for (const job of v1.workloads[a.name]!.jobs) expect(ownersOf(v2, job).sort()).toEqual([a.name, surge.name].sort());

    // Not yet acknowledged by the new pod: nothing changes.
    const waiting = reconcile(handing.cm, [going, b, c, surge], leases);
    expect(waiting.d.write).toBe('none');

    // Acknowledged: the old pod's share is gone, and no job moved again.
    const acked = reconcile(handing.cm, [going, b, c, surge], [...leases, runs(surge, v2)]);
    const v3 = configOf(acked.cm);
    expect(v3.workloads[a.name]).toBeUndefined();
    expect(acked.d.moves).toEqual([]);
    expect(sharesOf(v3)).toEqual({ [surge.name]: 9, [b.name]: 9, [c.name]: 9 });
  });

  it('scale-down: the Deployment shrinks first; the terminating pods keep their jobs (releasing) until the survivors acknowledge them', () => {
    const { cm, leases } = converged();
    expect(decideScale({ desired: 2, handoff: 'MakeBeforeBreak', statefulSet: deployment(3), jobs, config: configOf(cm), workspace: { version: 1, steps: [] }, pods: [a, b, c], leases })).toMatchObject({
      kind: 'scale',
      from: 3,
      to: 2,
    });
    // Before the Deployment marks a pod for deletion, nothing moves (it picks the victim).
    expect(reconcile(cm, [a, b, c], leases, 2).d.changed).toBe(false);
    const shrinking = reconcile(cm, [a, { ...b, terminating: true }, c], leases, 2);
    const v2 = configOf(shrinking.cm);
    expect(v2.workloads[b.name]?.releasing?.length).toBe(9);
    expect(Object.keys(v2.workloads).sort()).toEqual([a.name, b.name, c.name].sort());
    expect([v2.workloads[a.name]!.jobs.length, v2.workloads[c.name]!.jobs.length].sort()).toEqual([13, 14]);
    const done = reconcile(shrinking.cm, [a, { ...b, terminating: true }, c], [runs(a, v2), runs(c, v2), leases[1]!], 2);
    expect(Object.keys(configOf(done.cm).workloads).sort()).toEqual([a.name, c.name].sort());
  });

  it('a crash-looping pod: its peers run its share while the kubelet backs off, and it takes a share back once it runs again', () => {
    const { cm, v1, leases } = converged();
    const looping = { ...b, ready: false, waiting: { reason: 'CrashLoopBackOff' } };
    const handing = reconcile(cm, [a, looping, c], leases);
    const v2 = configOf(handing.cm);
    expect(v2.workloads[b.name]).toMatchObject({ jobs: v1.workloads[b.name]!.jobs, releasing: v1.workloads[b.name]!.jobs });
    // A Deployment's stopping pods do not read the handover announcement: it is never written.
    expect(Object.keys(handing.cm.annotations)).not.toContain('k8slab.info/handover');
    const held = reconcile(handing.cm, [a, looping, c], [runs(a, v2), leases[1]!, runs(c, v2)]);
    const v3 = configOf(held.cm);
    expect(v3.workloads[b.name]!.jobs).toEqual([]);
    expect(v3.workloads[a.name]!.jobs.length + v3.workloads[c.name]!.jobs.length).toBe(27);
    const back = configOf(reconcile(held.cm, [a, b, c], [runs(a, v3), leases[1]!, runs(c, v3)]).cm);
    expect(back.workloads[b.name]!.jobs).toHaveLength(9);
  });

  it('status judges the pool\'s workers by name: Running once each acknowledges its share', () => {
    const { cm, v1, leases } = converged();
    const d = converge(decideConfigMap({ swarm, statefulSet: deployment(3), configMap: cm, pods: [a, b, c], leases }));
    const st = computeStatus({ swarm, now: '2026-01-01T00:01:00Z', statefulSet: deployment(3), config: v1, workers: d.workers, ...(d.members ? { members: d.members } : {}), pods: [a, b, c], leases });
    expect(st.phase).toBe('Running');
    expect(st.uncoveredJobs).toBe(0);
    expect(st.workers?.map((w) => w.name).sort()).toEqual([a.name, b.name, c.name].sort());
  });

  it('a pod that acknowledges nothing yet leaves its jobs uncovered in status', () => {
    const { cm, v1, leases } = converged();
    const st = computeStatus({ swarm, now: '2026-01-01T00:01:00Z', statefulSet: deployment(3), config: v1, workers: 3, members: [a.name, b.name, c.name], pods: [a, b, c], leases: [leases[0]!, leases[1]!, acknowledgement(c, 0, [])] });
    expect(st.uncoveredJobs).toBe(9);
    void cm;
  });
});

describe('the schema: deploymentName', () => {
  it('accepts a Deployment pool with restart policy None', () => {
    expect(validateSwarm(deploymentSwarm()).ok).toBe(true);
  });

  it('refuses both pool kinds, neither, and a Deployment pool that restarts pods', () => {
    const both = deploymentSwarm();
    const problems = (s: unknown) => {
      const v = validateSwarm(s);
      return v.ok ? [] : v.problems;
    };
    expect(problems({ ...both, spec: { ...both.spec, statefulSetName: 'x' } })).toEqual(['spec: exactly one of statefulSetName and deploymentName must be set']);
    const { deploymentName: _d, ...neither } = both.spec;
    expect(problems({ ...both, spec: neither })).toEqual(['spec: exactly one of statefulSetName and deploymentName must be set']);
    expect(problems({ ...both, spec: { ...both.spec, restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } } })).toEqual([
      'spec: a Deployment pool needs restart.policy None (its workers hot-reload: a deleted pod comes back under a new name)',
    ]);
  });
});

describe('routing: a Deployment pool\'s objects reach its Swarm', () => {
  const podObject: KubeObject = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'swarm-worker-7d9f-x2x4z',
      namespace: 'ns',
      labels: { 'pod-template-hash': '7d9f', 'k8slab.info/swarm': 'swarm-worker' },
      ownerReferences: [{ apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'swarm-worker-7d9f', controller: true }],
    },
  };
  const leaseObject = (name: string): KubeObject => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: 'ns', labels: { 'k8slab.info/swarm': 'swarm-worker' } } });

  it('a Pod names its Deployment through its ReplicaSet; a Lease through its label, unless its name is a StatefulSet pod\'s', () => {
    expect(toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: podObject }))).toMatchObject({ kind: 'Pod', deploymentName: 'swarm-worker' });
    expect(toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: leaseObject('swarm-worker-7d9f-x2x4z') }))).toMatchObject({ kind: 'Lease', deploymentName: 'swarm-worker' });
    expect(toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: leaseObject('swarm-worker-2') }))).not.toHaveProperty('deploymentName');
    const deploymentObject: KubeObject = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'swarm-worker', namespace: 'ns' } };
    expect(toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: deploymentObject }))).toMatchObject({ kind: 'Deployment', name: 'swarm-worker' });
  });

  it('Deployment, Pod and Lease triggers map to the Swarm naming the Deployment (not to a StatefulSet Swarm of the same name)', async () => {
    const kube = new MemoryKube();
    const pooled = deploymentSwarm();
    kube.swarms.set('ns/swarm', { ...pooled, metadata: { ...pooled.metadata, uid: 'u1', creationTimestamp: '2026-01-01T00:00:00Z' } });
    const env = { kube, log: silentLog };
    const base = { source: 'apiserver', verb: 'update', mode: 'resource', apiVersion: 'v1', namespace: 'ns' } as const;
    const keysOf = async (trigger: Parameters<typeof targetsFor>[1]) => (await targetsFor(env, trigger)).map((t) => t.key.name);
    expect(await keysOf({ ...base, kind: 'Deployment', apiVersion: 'apps/v1', name: 'swarm-worker' })).toEqual(['swarm']);
    expect(await keysOf({ ...base, kind: 'Pod', name: 'swarm-worker-7d9f-x2x4z', deploymentName: 'swarm-worker' })).toEqual(['swarm']);
    expect(await keysOf({ ...base, kind: 'StatefulSet', apiVersion: 'apps/v1', name: 'swarm-worker' })).toEqual([]);
  });
});

describe('the reference worker\'s drain (DRAIN_CONFIGMAP)', () => {
  const text = 'version: 3\nworkloads:\n  pod-a:\n    jobs: [j1]\n    version: 3\n  pod-b:\n    jobs: []\n    version: 3\n';
  it('holds on while the config gives it jobs (releasing ones included); stops once it gives none, or once the ConfigMap is gone', () => {
    expect(holdsJobs(text, 'pod-a', parse)).toBe(true);
    expect(holdsJobs(text, 'pod-b', parse)).toBe(false);
    expect(holdsJobs(text, 'pod-c', parse)).toBe(false);
    expect(holdsJobs(undefined, 'pod-a', parse)).toBe(false);
    expect(holdsJobs('workloads: [not, a, map', 'pod-a', parse)).toBe(true);
  });
});
