// One run: the world (API server, controllers, kubelet, workers, Knative) around
// the production functions — functions/assign and functions/restart, as the
// function host builds them — driven by one schedule on the simulated clock,
// with the checker asked after every step.
import { validateSwarm } from '../../lib/api/validate.js';
import type { Swarm } from '../../lib/api/types.js';
import { toTrigger } from '../../lib/events/trigger.js';
import type { Trigger } from '../../lib/events/types.js';
import { KubeError } from '../../lib/kube/errors.js';
import type { ConfigMapView } from '../../lib/kube/types.js';
import { createCoalescer, uncoalesced, type Shortcuts } from '../../lib/reconcilers/shortcuts.js';
import { parse } from '../../lib/workerconfig/index.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { assignFunction } from '../../functions/assign/index.js';
import { restartFunction } from '../../functions/restart/index.js';
import type { SwarmFunction } from '../../functions/function.js';
import { SimKube, type Interference } from './api.js';
import { Checker, type ShareView, type Violation } from './checker.js';
import { Cluster } from './cluster.js';
import { FailoverModel } from './failover.js';
import { EPOCH, kubeObject, podKey, type ConfigMapObj, type DeploymentObj, type PodObj, type StatefulSetObj, type WorkerTemplate } from './model.js';
import { Rng } from './rng.js';
import type { Action, Schedule } from './schedule.js';
import { Store, type WatchEvent } from './store.js';
import { Timeline } from './timeline.js';
import { immutableChanges } from './transition.js';
import { periodMsOf, shippedResyncSchedule } from '../support/resync-schedule.js';

/** The PingSource's period, as shipped (knative/base/pingsource.yaml). */
const RESYNC_PERIOD_MS = periodMsOf(shippedResyncSchedule());

/** spec.failover.leaseSeconds in schedules with failover: the default. */
const FAILOVER_LEASE_SECONDS = 15;

/** Stated bounds (docs: test/sim/README.md). */
export const BOUNDS = {
  /** An unplanned failure's jobs may have no running owner this long. */
  failoverMs: 120_000,
  /** After the last action and fault, the Swarm converges within this. */
  quietMs: 15 * 60_000,
};

const NS = 'sim';
const POOL = 'workers';
const CONFIG = 'workers-config';

export interface RunResult {
  seed: number;
  violations: Violation[];
  steps: number;
  simulatedMs: number;
  trace: string[];
  /** The end state: config.yml's assignment (owners without marks) and status, as plain data. */
  final: { assignment: Record<string, string[]>; status: Record<string, unknown> | undefined };
}

interface Instance {
  id: string;
  fn: 'assign' | 'restart';
  dead: boolean;
  busy: number;
  lastUsed: number;
  handler: SwarmFunction;
  inflight: Set<Delivery>;
}

interface Delivery {
  fn: 'assign' | 'restart';
  trigger: Trigger;
  attempt: number;
  label: string;
}

const silent = { info() {}, warn() {}, debug() {} };

/** Which function each Trigger routes an event to: the functions' own filters (they mirror knative/base/triggers.yaml). */
const PROBES = (() => {
  const env = { kube: undefined as never, now: () => new Date(EPOCH), component: 'probe', log: silent };
  return { assign: assignFunction(env, createCoalescer()), restart: restartFunction(env, createCoalescer()) };
})();

/**
 * `shortcuts`: the production functions' shortcuts switched off (lib/reconcilers/shortcuts.ts), so a campaign run
 * with and without them shows they change no outcome (--compare).
 */
export function run(schedule: Schedule, options: { trace?: boolean; maxSteps?: number; shortcuts?: Partial<Shortcuts> } = {}): Promise<RunResult> {
  return new World(schedule, !!options.trace, options.shortcuts ?? {}).run(options.maxSteps ?? 2_000_000);
}

class World {
  private readonly timeline = new Timeline();
  private readonly store = new Store(() => this.timeline.now);
  private readonly rng: Rng;
  private readonly net: Rng;
  private readonly apiRng: Rng;
  private readonly checker: Checker;
  private readonly cluster: Cluster;
  private readonly instances: Instance[] = [];
  private instanceSeq = 0;
  private readonly trace: string[] = [];
  private readonly reads = new Map<string, ReturnType<Checker['snapshot']> | undefined>();
  private readonly configSeen = new Map<string, string | undefined>();
  private readonly faults = { apiErrors: { until: -1, p: 0 }, stale: { until: -1, p: 0 }, drop: { until: -1, p: 0 }, delay: { until: -1 }, stall: { until: -1, p: 0 } };
  private steps = 0;
  private settle = false;
  private jobSeq = 0;
  /** Jobs removed from the spec, last removed last: a 'jobs' action's readd puts some back under their own names. */
  private removedJobs: Swarm['spec']['workload']['jobs'] = [];
  private template: WorkerTemplate;

  constructor(
    private readonly schedule: Schedule,
    private readonly tracing: boolean,
    private readonly shortcuts: Partial<Shortcuts>,
  ) {
    const root = new Rng(schedule.seed);
    this.rng = root.fork('world');
    this.net = root.fork('network');
    this.apiRng = root.fork('api');
    const o = schedule.options;
    this.checker = new Checker(() => this.timeline.now, { failoverMs: BOUNDS.failoverMs });
    this.checker.acknowledging = o.acknowledges;
    this.checker.maxUnavailable = o.maxUnavailable;
    this.checker.setHandoff(o.handoff);
    this.checker.setRefused(refused(o.policy, o.acknowledges));
    const truth = {
      started: (p: string, w: string, j: string) => {
        this.checker.started(p, w, j);
        this.log(`worker ${p} started ${j}`);
      },
      stopped: (p: string, j: string) => {
        this.checker.stopped(p, j);
        this.log(`worker ${p} stopped ${j}`);
      },
      acknowledged: (p: string, jobs: readonly string[]) => this.checker.acknowledged(p, jobs),
      failed: (p: string, how: string) => {
        this.checker.failed(p, how);
        this.log(`worker ${p} failed: ${how}`);
      },
      pod: (name: string, change: 'ready' | 'unready' | 'deleting' | 'gone', by?: string) => {
        this.checker.pod(name, change, by);
        if ((change === 'deleting' || change === 'gone') && !this.slotWanted(name)) this.checker.slotGone(name);
        this.log(`pod ${name} ${change}${by ? ` by ${by}` : ''}`);
      },
    };
    this.cluster = new Cluster(this.store, this.timeline, root.fork('cluster'), truth, NS, { kind: o.pool, name: POOL, configMap: CONFIG, configKey: 'config.yml' });
    this.template = { reload: o.policy === 'None' ? 'hot' : 'restart', acknowledges: o.acknowledges, graceSeconds: 60, revision: 1 };
    if (o.failover) {
      // The Swarm's handoff as its workers read it from failover.yml (a change reaches them like the config does: ignored here).
      const settings = () => ({ leaseSeconds: FAILOVER_LEASE_SECONDS, handoff: this.checker.handoff });
      const failoverTruth = {
        failed: truth.failed,
        suspended: (p: string) => {
          this.checker.suspended(p);
          this.log(`worker ${p} frozen`);
        },
        resumed: (p: string, jobs: readonly string[]) => {
          this.checker.resumed(p, jobs);
          this.log(`worker ${p} resumed running ${jobs.length} job(s)`);
        },
      };
      this.cluster.failover = new FailoverModel(settings, this.timeline, root.fork('failover-model'), failoverTruth, this.cluster.failoverHost());
    }
    this.store.watch((e) => this.source(e));
    // Slots that left the pool (a scale-down by anyone: a user, or assign through the scale subresource) are
    // nobody's to serve any more.
    this.store.watch((e) => (e.kind === 'StatefulSet' || e.kind === 'Swarm') && this.checker.slotsLeft((name) => this.slotWanted(name)));
  }

  /** The shares a config.yml holds, parsed as the workers parse it (undefined: absent or garbled). */
  private parseShares(text: string | undefined): ReadonlyMap<string, ShareView> | undefined {
    if (text === undefined) return undefined;
    if (this.parsedShares?.text !== text) {
      let shares: ReadonlyMap<string, ShareView> | undefined;
      try {
        shares = new Map(Object.entries(parse(text).workloads));
      } catch {
        shares = undefined;
      }
      this.parsedShares = { text, shares };
    }
    return this.parsedShares.shares;
  }

  private parsedShares: { text: string; shares: ReadonlyMap<string, ShareView> | undefined } | undefined;

  /** Whether the pool wants a pod of this name: a StatefulSet ordinal in range, of the StatefulSet and of a Swarm that scales it (a Deployment's pod names never return). */
  private slotWanted(name: string): boolean {
    if (this.schedule.options.pool === 'Deployment') return false;
    const sts = this.store.peek<StatefulSetObj>('StatefulSet', podKey(NS, POOL));
    const ordinal = Number(name.slice(name.lastIndexOf('-') + 1));
    // A Swarm that scales its pool wants spec.replicas from the moment the user's edit lands, before the
    // StatefulSet follows: a pod past them is departing, outside maxUnavailable's count (seed 1187).
    const desired = this.store.peek<Swarm>('Swarm', podKey(NS, 'swarm'))?.spec.replicas;
    return !!sts && ordinal >= sts.startOrdinal && ordinal < sts.startOrdinal + Math.min(sts.replicas, desired ?? sts.replicas);
  }

  private log(line: string): void {
    if (this.tracing) this.trace.push(`${(this.timeline.now / 1000).toFixed(3).padStart(9)} ${line}`);
  }

  // --- the run --------------------------------------------------------------------
  async run(maxSteps: number): Promise<RunResult> {
    const o = this.schedule.options;
    this.setup();
    for (const a of this.schedule.actions) this.timeline.schedule(a.at, () => this.act(a));
    const end = this.schedule.activeMs + BOUNDS.quietMs;
    // The PingSource: each period, on the minute.
    for (let t = RESYNC_PERIOD_MS; t <= end; t += RESYNC_PERIOD_MS) this.timeline.schedule(t, () => this.publish({ type: 'dev.knative.sources.ping', data: { namespace: NS } }, 'ping'));
    // Knative's autoscaler: idle instances go to zero.
    for (let t = 30_000; t <= end; t += 30_000) this.timeline.schedule(t, () => this.scaleToZero());
    let finished = false;
    this.timeline.schedule(end, () => {
      finished = true;
      const swarm = this.store.peek<Swarm>('Swarm', podKey(NS, 'swarm'));
      const cm = this.store.peek<ConfigMapObj>('ConfigMap', podKey(NS, CONFIG));
      const version = /^version: (\d+)$/m.exec(cm?.data['config.yml'] ?? '')?.[1];
      const pool = this.store.peek<StatefulSetObj | DeploymentObj>(o.pool, podKey(NS, POOL));
      const dedicated = (swarm?.spec.workload.jobs ?? []).filter((j) => typeof j !== 'string' && j.dedicated).length;
      const shared = (swarm?.spec.workload.jobs.length ?? 0) - dedicated;
      this.checker.finalPool = { workers: pool?.replicas ?? 0, dedicated, shared };
      this.checker.converged(swarm?.status as Record<string, unknown> | undefined, version ? Number(version) : undefined, swarm?.metadata.generation);
    });
    while (!finished && this.steps < maxSteps) {
      const entry = this.timeline.pop();
      if (!entry) break;
      this.steps++;
      this.settle = false;
      entry.run();
      // Let the promise reactions the step settled run to their next request.
      if (this.settle || entry.settles) await new Promise<void>((r) => setImmediate(r));
      this.checker.step();
    }
    if (!finished) this.checker.defect(`the run did not finish in ${maxSteps} steps`);
    for (const i of this.instances) i.dead = true;
    return { seed: this.schedule.seed, violations: this.checker.violations, steps: this.steps, simulatedMs: this.timeline.now, trace: this.trace, final: this.final() };
  }

  /** Who owns what at the end (config.yml's shares less their marks: a job `releasing` is its gainer's) and status. */
  private final(): RunResult['final'] {
    const cm = this.store.peek<ConfigMapObj>('ConfigMap', podKey(NS, CONFIG));
    const swarm = this.store.peek<Swarm>('Swarm', podKey(NS, 'swarm'));
    const assignment: Record<string, string[]> = {};
    try {
      const config = parse(cm?.data['config.yml'] ?? '');
      for (const [worker, share] of Object.entries(config.workloads)) {
        const releasing = new Set(share.releasing ?? []);
        assignment[worker] = [...share.jobs.filter((j) => !releasing.has(j)), ...(share.awaiting ?? [])].sort();
      }
    } catch {
      // no readable config: an empty assignment
    }
    const { phase, uncoveredJobs, readyReplicas, replicas } = (swarm?.status ?? {}) as Record<string, unknown>;
    const ready = (swarm?.status?.conditions ?? []).find((c) => c.type === 'Ready');
    return { assignment, status: swarm?.status ? { phase, uncoveredJobs, readyReplicas, replicas, ready: ready?.status, reason: ready?.reason } : undefined };
  }

  private setup(): void {
    const o = this.schedule.options;
    const names = Array.from({ length: o.jobs }, () => this.newJob());
    // A few heavier jobs and a few dedicated ones (older schedules have neither).
    const jobs: Swarm['spec']['workload']['jobs'] = names.map((name, i) =>
      i < (o.dedicated ?? 0) ? { name, dedicated: true } : i < (o.dedicated ?? 0) + (o.weighted ?? 0) ? { name, weight: 2 + (i % 4) } : name,
    );
    if (o.pool === 'StatefulSet') {
      const sts: StatefulSetObj = { name: POOL, namespace: NS, uid: 'sts-1', replicas: o.replicas, startOrdinal: 0, podManagementPolicy: o.podManagement, template: this.template, status: { replicas: 0, readyReplicas: 0 } };
      this.store.put('StatefulSet', podKey(NS, POOL), sts);
    } else {
      const d: DeploymentObj = { name: POOL, namespace: NS, uid: 'deploy-1', replicas: o.replicas, maxSurge: 1, maxUnavailable: 0, template: this.template, status: { replicas: 0, readyReplicas: 0 } };
      this.store.put('Deployment', podKey(NS, POOL), d);
    }
    const swarm: Swarm = {
      apiVersion: 'k8slab.info/v1alpha1',
      kind: 'Swarm',
      metadata: { name: 'swarm', namespace: NS, uid: `swarm-${this.schedule.seed}`, generation: 1, creationTimestamp: '2026-01-01T00:00:00Z' },
      spec: {
        ...(o.pool === 'StatefulSet' ? { statefulSetName: POOL } : { deploymentName: POOL }),
        configMapName: CONFIG,
        ...(o.scaler === 'swarm' ? { replicas: o.replicas } : {}),
        workload: { jobs },
        restart: { policy: o.policy, handoff: o.handoff, maxUnavailable: o.maxUnavailable },
        ...(o.failover ? { failover: { leaseSeconds: FAILOVER_LEASE_SECONDS } } : {}),
      },
    };
    this.checker.setJobs(names, dedicatedNames(jobs));
    this.timeline.schedule(this.rng.seconds(0, 5), () => this.store.put('Swarm', podKey(NS, 'swarm'), swarm));
  }

  private newJob(): string {
    return `job-${++this.jobSeq}`;
  }

  // --- users and faults -----------------------------------------------------------
  private act(a: Action): void {
    this.log(`action ${JSON.stringify(a)}`);
    const now = this.timeline.now;
    switch (a.kind) {
      case 'scale':
        if (a.target === 'swarm') this.editSwarm((s) => (s.spec.replicas = a.to));
        else this.editPool((p) => (p.replicas = a.to));
        return;
      case 'jobs':
        this.editSwarm((s) => {
          const specs = s.spec.workload.jobs;
          const names = specs.map((j) => (typeof j === 'string' ? j : j.name));
          const removed = new Set<string>();
          for (let i = 0; i < a.remove && names.length - removed.size > 1; i++) removed.add(names[(i * 7 + a.add) % names.length]!);
          const nameOf = (j: (typeof specs)[number]) => (typeof j === 'string' ? j : j.name);
          const putBack = a.readd ? this.removedJobs.filter((j) => !names.includes(nameOf(j))).slice(-a.readd) : [];
          this.removedJobs = [...this.removedJobs.filter((j) => !putBack.includes(j)), ...specs.filter((j) => removed.has(nameOf(j)))];
          s.spec.workload.jobs = [...specs.filter((j) => !removed.has(nameOf(j))), ...putBack, ...Array.from({ length: a.add }, () => this.newJob())];
        });
        return;
      case 'handoff':
        this.editSwarm((s) => (s.spec.restart = { ...s.spec.restart, handoff: a.value }));
        return;
      case 'policy':
        // A new policy comes with workers that behave accordingly: a new template, rolled out.
        if (this.editSwarm((s) => (s.spec.restart = { ...s.spec.restart, policy: a.value }))) {
          this.checker.setRefused(refused(a.value, this.template.acknowledges));
          this.template = { ...this.template, reload: a.value === 'None' ? 'hot' : 'restart', revision: this.template.revision + 1 };
          this.editPool((p) => (p.template = this.template));
        }
        return;
      case 'rollout-restart':
        this.template = { ...this.template, revision: this.template.revision + 1 };
        this.editPool((p) => (p.template = this.template));
        return;
      case 'ordinals-start':
        this.editPool((p) => ((p as StatefulSetObj).startOrdinal = a.value));
        return;
      case 'delete-pod': {
        const pods = this.store.peekAll<PodObj>('Pod').filter((p) => !p.deletion);
        if (pods.length) this.cluster.deletePod(pods[a.pick % pods.length]!, 'user');
        return;
      }
      case 'configmap': {
        const cm = this.store.peek<ConfigMapObj>('ConfigMap', podKey(NS, CONFIG));
        if (!cm) return;
        // The workspace lost by hand: an unplanned failure (make-before-break's coverage is excused for the failover time).
        this.checker.configLost();
        if (a.how === 'delete') this.store.remove('ConfigMap', podKey(NS, CONFIG));
        else this.store.put('ConfigMap', podKey(NS, CONFIG), { ...cm, data: { ...cm.data, 'config.yml': 'workloads: [garbled' } });
        return;
      }
      case 'crash': {
        const uids = this.cluster.livePodUids();
        if (!uids.length) return;
        const uid = uids[a.pick % uids.length]!;
        if (a.loopMs > 0) this.cluster.crashLoop(uid, now + a.loopMs);
        else this.cluster.crash(uid);
        return;
      }
      case 'kill-instance': {
        const alive = this.instances.filter((i) => i.fn === a.fn && !i.dead);
        const busy = alive.filter((i) => i.busy > 0);
        const pool = busy.length ? busy : alive;
        if (pool.length) this.kill(pool[a.pick % pool.length]!);
        return;
      }
      case 'api-errors':
        this.faults.apiErrors = { until: now + a.forMs, p: a.p };
        return;
      case 'stale-reads':
        this.faults.stale = { until: now + a.forMs, p: a.p };
        return;
      case 'stall-requests':
        this.faults.stall = { until: now + a.forMs, p: a.p };
        return;
      case 'drop-events':
        this.faults.drop = { until: now + a.forMs, p: a.p };
        return;
      case 'delay-events':
        this.faults.delay = { until: now + a.forMs };
        return;
      case 'stuck-pods':
        this.cluster.stuckUntil = now + a.forMs;
        this.cluster.stuckReason = a.reason;
        return;
      case 'slow-workers':
        this.cluster.slowUntil = now + a.forMs;
        return;
      case 'freeze':
      case 'partition':
      case 'hang':
        this.cluster.failoverFault(a.kind, a.pick, a.forMs);
        return;
    }
  }

  /** A user's edit of the Swarm's spec, as the API server takes it (the schema and its CEL rules; refused: nothing changes). */
  private editSwarm(change: (s: Swarm) => void): boolean {
    const key = podKey(NS, 'swarm');
    const current = this.store.peek<Swarm>('Swarm', key);
    if (!current) return false;
    const next = structuredClone(current);
    change(next);
    const { status: _status, ...candidate } = next;
    const changed = immutableChanges(current, next);
    if (changed.length > 0 || !validateSwarm(candidate).ok) {
      this.log(`the API server refused the edit${changed.length ? ` (immutable: ${changed.join(', ')})` : ''}`);
      return false;
    }
    next.metadata.generation = (next.metadata.generation ?? 1) + 1;
    this.store.put('Swarm', key, next);
    this.checker.setJobs(next.spec.workload.jobs.map((j) => (typeof j === 'string' ? j : j.name)), dedicatedNames(next.spec.workload.jobs));
    return true;
  }

  private editPool(change: (p: StatefulSetObj | DeploymentObj) => void): void {
    const kind = this.schedule.options.pool;
    const key = podKey(NS, POOL);
    const current = this.store.peek<StatefulSetObj | DeploymentObj>(kind, key);
    if (!current) return;
    const next = structuredClone(current);
    change(next);
    this.store.put(kind, key, next);
  }

  // --- Knative: the source, the broker, the services ---------------------------------
  private source(e: WatchEvent): void {
    const watched =
      e.kind === 'Swarm' ||
      e.kind === 'StatefulSet' ||
      e.kind === 'Deployment' ||
      (e.kind === 'Pod' && 'k8slab.info/swarm' in (e.value as PodObj).labels) ||
      (e.kind === 'Lease' && 'k8slab.info/swarm' in ((e.value as { labels: Record<string, string> }).labels ?? {})) ||
      (e.kind === 'ConfigMap' && (e.value as ConfigMapObj).labels?.['app.kubernetes.io/managed-by'] === 'swarm');
    if (!watched) return;
    if (e.kind === 'Swarm' || e.kind === 'ConfigMap') this.log(`${e.verb} ${e.kind} rv ${e.rv}`);
    if (e.kind === 'ConfigMap' && process.env.SIM_ANNOT) this.log(`annotations ${JSON.stringify((e.value as ConfigMapObj).annotations ?? null)}`);
    if (e.kind === 'ConfigMap' && process.env.SIM_CONFIG) this.log(`config.yml ${JSON.stringify((e.value as ConfigMapObj).data?.['config.yml'] ?? null)}`);
    const object = kubeObject(e.kind, e.value, e.rv);
    this.publish({ type: `dev.knative.apiserver.resource.${e.verb}`, kind: e.kind, data: object }, `${e.kind}/${object.metadata.name}@${e.rv}`);
  }

  /** Into the broker: lost, duplicated, delayed (and so reordered) at the seeded probabilities. */
  private publish(event: { type: string; kind?: string; data: unknown }, label: string): void {
    const now = this.timeline.now;
    const pDrop = now < this.faults.drop.until ? this.faults.drop.p : 0.01;
    if (this.net.chance(pDrop)) {
      this.checker.eventLost();
      return this.log(`event lost ${label}`);
    }
    let trigger: Trigger;
    try {
      trigger = toTrigger(event);
    } catch (err) {
      return this.checker.defect(`a well-formed event was refused: ${String(err)}`);
    }
    const copies = this.net.chance(0.03) ? 2 : 1;
    for (let c = 0; c < copies; c++) {
      const delayed = now < this.faults.delay.until || this.net.chance(0.03);
      const delay = delayed ? this.net.seconds(1, 10) : this.net.int(2, 40);
      for (const fn of ['assign', 'restart'] as const) {
        this.timeline.after(delay, () => this.deliver({ fn, trigger, attempt: 0, label }));
      }
    }
  }

  private deliver(d: Delivery): void {
    if (!PROBES[d.fn].accepts(d.trigger)) return;
    const instance = this.pickInstance(d.fn);
    const start = () => {
      if (instance.dead) return this.retry(d, 'instance gone');
      instance.busy++;
      instance.lastUsed = this.timeline.now;
      instance.inflight.add(d);
      this.log(`${instance.id} handles ${d.label}${d.attempt ? ` (retry ${d.attempt})` : ''}`);
      if (d.fn === 'assign' && d.label === 'ping') this.checker.resynced();
      instance.handler.handle(d.trigger).then(
        (res) => {
          if (instance.dead) return;
          this.settle = true;
          instance.busy--;
          instance.inflight.delete(d);
          instance.lastUsed = this.timeline.now;
          if (res.reply) {
            const reply = res.reply;
            this.timeline.after(this.net.int(2, 40), () => this.publishReply({ type: reply.type, data: reply.data }));
          }
        },
        (err: unknown) => {
          if (instance.dead) return;
          this.settle = true;
          instance.busy--;
          instance.inflight.delete(d);
          if (!(err instanceof KubeError)) this.checker.defect(`${d.fn} failed with an unexpected error: ${err instanceof Error ? err.stack?.split('\n').slice(0, 3).join(' ') : String(err)}`);
          this.retry(d, String(err));
        },
      );
    };
    const cold = instance.busy === 0 && instance.lastUsed < 0;
    if (cold) {
      instance.lastUsed = this.timeline.now;
      this.timeline.after(this.net.seconds(1.0, 2.5), start, true);
    } else start();
    this.settle = true;
  }

  private publishReply(event: { type: string; data: unknown }): void {
    let trigger: Trigger;
    try {
      trigger = toTrigger(event);
    } catch (err) {
      return this.checker.defect(`assign's reply was refused: ${String(err)}`);
    }
    this.timeline.after(this.net.int(2, 40), () => this.deliver({ fn: 'restart', trigger, attempt: 0, label: 'assignment.changed' }));
  }

  /** Knative's delivery spec: retry 6, exponential from 0.5 s; then the dead-letter sink. */
  private retry(d: Delivery, why: string): void {
    if (d.attempt >= 6) {
      // Dead-lettered, the event never reaches the functions: lost like a dropped one, repaired by the resync.
      this.checker.eventLost();
      return this.log(`dead letter ${d.label}: ${why}`);
    }
    const delay = 500 * 2 ** d.attempt;
    this.timeline.after(delay, () => this.deliver({ ...d, attempt: d.attempt + 1 }));
  }

  private pickInstance(fn: 'assign' | 'restart'): Instance {
    const max = fn === 'assign' ? this.schedule.options.instances : Math.min(2, this.schedule.options.instances);
    const alive = this.instances.filter((i) => i.fn === fn && !i.dead);
    const idle = alive.filter((i) => i.busy === 0);
    if (idle.length > 0) return idle[this.net.int(0, idle.length - 1)]!;
    if (alive.length < max) return this.handlerFor(fn, 'new');
    return alive[this.net.int(0, alive.length - 1)]!;
  }

  private handlerFor(fn: 'assign' | 'restart', _fresh: 'new'): Instance {
    const id = `${fn}-${++this.instanceSeq}`;
    const instance: Instance = { id, fn, dead: false, busy: 0, lastUsed: -1, handler: undefined as unknown as SwarmFunction, inflight: new Set() };
    const env: ReconcileEnv = {
      kube: new SimKube(this.store, this.apiHost(), instance, this.apiRng.fork(id)),
      now: () => new Date(EPOCH + this.timeline.now),
      random: () => this.rng.next(),
      component: `swarm-${fn}`,
      log: silent,
      shortcuts: this.shortcuts,
    };
    const coalescer = this.shortcuts.coalescer === false ? uncoalesced : createCoalescer();
    instance.handler = fn === 'assign' ? assignFunction(env, coalescer) : restartFunction(env, coalescer);
    this.instances.push(instance);
    return instance;
  }

  private kill(instance: Instance): void {
    this.log(`killed ${instance.id} with ${instance.inflight.size} event(s) in flight`);
    instance.dead = true;
    for (const d of instance.inflight) this.retry(d, 'connection reset');
    instance.inflight.clear();
  }

  private scaleToZero(): void {
    for (const i of this.instances) if (!i.dead && i.busy === 0 && i.lastUsed >= 0 && this.timeline.now - i.lastUsed > 60_000) i.dead = true;
  }

  private apiHost() {
    return {
      now: () => this.timeline.now,
      at: (at: number, fn: () => void) => this.timeline.schedule(at, fn, true),
      // A stalled instance: the request leaves (or its answer is heard) seconds late, while other instances go on.
      latency: () => (this.timeline.now < this.faults.stall.until && this.apiRng.chance(this.faults.stall.p) ? this.apiRng.seconds(1, 8) : this.apiRng.int(1, 25)),
      interfere: (_instance: string, op: string, write: boolean): Interference => {
        const now = this.timeline.now;
        if (now < this.faults.apiErrors.until && this.apiRng.chance(this.faults.apiErrors.p)) {
          const roll = this.apiRng.next();
          if (roll < 0.2) return { kind: 'timeout', applied: write && this.apiRng.chance(0.5) };
          return { kind: 'error', status: this.apiRng.pick([409, 429, 500, 503] as const) };
        }
        // A lagging cache answers single-object reads (the guarded write that follows meets a 409). Swarm's lists are
        // consistent reads (lib/kube: no resourceVersion=0), so they are never served stale.
        if (!write && op.startsWith('get') && now < this.faults.stale.until && this.apiRng.chance(this.faults.stale.p)) return { kind: 'stale', lagMs: this.apiRng.seconds(0.2, 5) };
        return { kind: 'none' };
      },
      served: (instance: string, op: string, result: unknown, stale: boolean) => {
        // A stale read may hide what its event announced (a ConfigMap deleted, read as still there): the reconcile
        // acts as if that event never came, and the resync repairs it, as for a lost event.
        if (stale) this.checker.eventLost();
        // What status is judged from: the pods and the Leases as read (a stale read: not checked).
        if (op === 'listLeases' || op === 'listPods') this.reads.set(`${instance}/${op}`, stale ? undefined : this.checker.snapshot());
        // The config an instance's status speaks of: the one it read, or the one it wrote.
        if (op === 'getConfigMap' || op === 'createConfigMap' || op === 'patchConfigMap') this.configSeen.set(instance, (result as ConfigMapView | undefined)?.data?.['config.yml']);
        if (op === 'replaceSwarmStatus') {
          const status = (result as Swarm).status as Record<string, unknown>;
          this.log(`${instance} wrote status ${JSON.stringify({ phase: status.phase, version: status.version, uncovered: status.uncoveredJobs, ready: (status.conditions as Array<{ type: string; status: string; reason: string }> | undefined)?.find((c) => c.type === 'Ready') })}`);
          const pods = this.reads.get(`${instance}/listPods`);
          const leases = this.reads.get(`${instance}/listLeases`);
          if (pods && leases) this.checker.status(status, pods, leases, this.parseShares(this.configSeen.get(instance)));
        }
        if (op === 'deletePod' || op === 'replaceStatefulSetScale' || op === 'replaceDeploymentScale' || op === 'createConfigMap' || op === 'patchConfigMap' || op === 'annotatePod') {
          this.log(`${instance} ${op} → ${typeof result === 'string' ? result : 'ok'}`);
        }
      },
      recorded: () => undefined,
    };
  }
}

/**
 * Hot reload over workers that do not acknowledge: the API admits it, Swarm refuses it on its first look at the
 * pool (AcknowledgementRequired), and the checker expects that refusal instead of the promise.
 */
const refused = (policy: 'None' | 'Restart', acknowledges: boolean): boolean => policy === 'None' && !acknowledges;

const dedicatedNames = (jobs: Swarm['spec']['workload']['jobs']): string[] => jobs.flatMap((j) => (typeof j === 'object' && j.dedicated ? [j.name] : []));
