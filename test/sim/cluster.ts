// The cluster around Swarm: the StatefulSet and Deployment controllers, the
// kubelet (pod start, readiness, ConfigMap volume propagation, termination,
// crashes and CrashLoopBackOff) and the worker processes in the pods. Workers
// run the worker SDK's own pure logic (sdk/typescript: state.ts for a
// reload, drain.ts for the way out) and report every job they start and stop
// to the checker, which keeps its own record of the truth.
//
// Timings come from measurements on the real node (shared/realnode-spike and
// bench/RESULTS.md): a pod is Ready about 1.6-1.7 s after it is created; a
// ConfigMap change reaches a mounted volume at the kubelet's next sync (38-69 s
// measured at the default period; drawn here from 0-90 s), within about a
// second once assign's refresh annotation lands on the pod.
import { jobsDigest } from '../../lib/workerconfig/index.js';
import { departureOf, waitsOn, type Departure } from '../../sdk/typescript/src/drain.js';
import { INITIAL_STATE, nextState, stopAll, type WorkerState } from '../../sdk/typescript/src/state.js';
import { EPOCH, podKey, stamp, type ConfigMapObj, type DeploymentObj, type LeaseObj, type PodObj, type StatefulSetObj, type WorkerTemplate, templateLabels } from './model.js';
import { PROBE, type FailoverModel, type FailoverProc } from './failover.js';
import type { Rng } from './rng.js';
import type { Store, WatchEvent } from './store.js';
import type { Timeline } from './timeline.js';
// The workers parse with the production parser, remembered by text (parse-memo.ts).
import { parseRemembered as parse } from './parse-memo.js';

/** What the world tells the checker: the truth, as it happens. */
export interface Truth {
  started(proc: string, worker: string, job: string): void;
  stopped(proc: string, job: string): void;
  /** The process's acknowledgement naming these jobs is in the API now. */
  acknowledged(proc: string, jobs: readonly string[]): void;
  /** An unplanned failure (a crash, a kill at the end of the grace period): its jobs stopped. */
  failed(proc: string, how: string): void;
  /** A pod became Ready / not Ready / was deleted (by whom). */
  pod(name: string, change: 'ready' | 'unready' | 'deleting' | 'gone', by?: string): void;
}

export interface PoolSpec {
  kind: 'StatefulSet' | 'Deployment';
  name: string;
  configMap: string;
  configKey: string;
}

interface Proc {
  id: string;
  pod: string;
  podUid: string;
  alive: boolean;
  state: WorkerState;
  /** The jobs this process really runs. */
  running: Set<string>;
  template: WorkerTemplate;
  /** The last acknowledgement asked for (version and jobs). */
  acked: string;
  /** As the failover model sees it (failover.ts). */
  view?: FailoverProc & { proc: Proc };
}

interface Kubelet {
  /** The config.yml the pod's volume holds (undefined: no file). */
  volume: string | undefined;
  deliveryAt?: number;
  restarts: number;
  proc?: Proc;
  procSeq: number;
  /** A crash loop lasts until then. */
  crashLoopUntil?: number;
  /** The pod never starts (an image that cannot be pulled, no node fits). */
  stuck?: 'ImagePullBackOff' | 'Unschedulable';
  sigterm?: boolean;
  /** The refresh annotation this kubelet last acted on. */
  refreshSeen?: string;
}

export class Cluster {
  readonly kubelets = new Map<string, Kubelet>(); // by pod uid
  private stsPending = false;
  private deployPending = false;
  private podSeq = 0;
  /** The next pods created never start, until then. */
  stuckUntil = -1;
  stuckReason: 'ImagePullBackOff' | 'Unschedulable' = 'ImagePullBackOff';
  /** Extra reload/ack delay for slow workers, until then. */
  slowUntil = -1;
  /** With spec.failover and acknowledging workers: heartbeats, fencing, the readiness probe (failover.ts). */
  failover?: FailoverModel;

  constructor(
    private readonly store: Store,
    private readonly timeline: Timeline,
    private readonly rng: Rng,
    private readonly truth: Truth,
    readonly ns: string,
    readonly pool: PoolSpec,
  ) {
    store.watch((e) => this.onWatch(e));
  }

  private onWatch(e: WatchEvent): void {
    if (e.kind === 'StatefulSet' || (e.kind === 'Pod' && this.pool.kind === 'StatefulSet')) this.kickStatefulSet();
    if (e.kind === 'Deployment' || (e.kind === 'Pod' && this.pool.kind === 'Deployment')) this.kickDeployment();
    if (e.kind === 'ConfigMap' && e.key === podKey(this.ns, this.pool.configMap)) {
      // Each kubelet picks the change up at its next sync of the pod.
      for (const k of this.kubelets.values()) if (k.proc?.alive || k.proc === undefined) this.deliverBy(k, this.timeline.now + this.rng.seconds(0, 90));
    }
    if (e.kind === 'Pod' && e.verb === 'update') {
      const pod = e.value as PodObj;
      const k = this.kubelets.get(pod.uid);
      if (!k) return;
      // The refresh annotation makes the kubelet sync the pod now.
      if (pod.annotations['k8slab.info/config-refresh'] !== undefined && pod.annotations['k8slab.info/config-refresh'] !== k.refreshSeen) {
        k.refreshSeen = pod.annotations['k8slab.info/config-refresh'];
        this.deliverBy(k, this.timeline.now + this.rng.seconds(0.3, 1.5));
      }
      if (pod.deletion && !k.sigterm) {
        k.sigterm = true;
        // Out of service from its deletionTimestamp (Kubernetes drops it from endpoints then), not from the SIGTERM
        // its kubelet sends a moment later: a pool whose every pod is being deleted has nobody to hand to (seed 3859).
        this.truth.pod(pod.name, 'deleting', pod.deletion.by);
        this.timeline.after(this.rng.int(50, 400), () => this.terminate(pod.uid));
      }
    }
  }

  // --- pods -------------------------------------------------------------------
  private pods(): PodObj[] {
    return this.store.peekAll<PodObj>('Pod').filter((p) => p.namespace === this.ns);
  }

  private podOf(uid: string): PodObj | undefined {
    return this.pods().find((p) => p.uid === uid);
  }

  private updatePod(uid: string, change: (p: PodObj) => PodObj): void {
    const p = this.podOf(uid);
    if (p) this.store.put('Pod', podKey(p.namespace, p.name), change(structuredClone(p)));
  }

  private createPod(name: string, template: WorkerTemplate, owner: { sts?: string; rs?: string; hash?: string }): void {
    const uid = `pod-${++this.podSeq}-${this.rng.id(4)}`;
    const labels = templateLabels(this.pool.name, template);
    if (owner.hash) labels['pod-template-hash'] = owner.hash;
    const pod: PodObj = {
      name,
      namespace: this.ns,
      uid,
      createdAt: this.timeline.now,
      labels,
      annotations: {},
      ...(owner.sts ? { ownerStatefulSet: owner.sts } : {}),
      ...(owner.rs ? { ownerReplicaSet: owner.rs } : {}),
      template: structuredClone(template),
      phase: 'Pending',
      ready: false,
    };
    const k: Kubelet = { volume: undefined, restarts: 0, procSeq: 0 };
    if (this.timeline.now < this.stuckUntil) k.stuck = this.stuckReason;
    this.kubelets.set(uid, k);
    this.store.put('Pod', podKey(this.ns, name), pod);
    if (k.stuck) {
      const reason = k.stuck;
      this.timeline.after(this.rng.int(200, 1500), () =>
        this.updatePod(uid, (p) => (reason === 'Unschedulable' ? { ...p, unschedulable: '0/1 nodes are available: insufficient cpu' } : { ...p, waiting: { reason, message: 'image not found' } })),
      );
      // Once the cause is gone (capacity freed, the image pushed), the scheduler's or the kubelet's next try succeeds.
      this.timeline.schedule(this.stuckUntil + this.rng.seconds(5, 30), () => {
        k.stuck = undefined;
        this.updatePod(uid, (p) => ({ ...p, unschedulable: undefined as never, waiting: undefined as never }));
        this.timeline.after(this.rng.seconds(1.0, 2.2), () => this.startContainer(uid));
      });
      return;
    }
    this.timeline.after(this.rng.seconds(1.0, 2.2), () => this.startContainer(uid));
  }

  private startContainer(uid: string): void {
    const pod = this.podOf(uid);
    const k = this.kubelets.get(uid);
    if (!pod || !k || pod.deletion) return;
    k.volume = this.configText();
    const proc: Proc = {
      id: `${pod.name}/${uid}/${++k.procSeq}`,
      pod: pod.name,
      podUid: uid,
      alive: true,
      state: INITIAL_STATE,
      running: new Set(),
      template: pod.template,
      acked: '',
    };
    k.proc = proc;
    this.updatePod(uid, (p) => ({ ...p, phase: 'Running', startedAt: this.timeline.now, waiting: undefined as never }));
    if (this.failover && proc.template.acknowledges) {
      // Its readiness is the failover model's probe from now on.
      this.failover.started(this.viewOf(proc));
      this.load(proc, k.volume);
      return;
    }
    this.load(proc, k.volume);
    // The readiness probe (knative/samples: /readyz every 1 s for the StatefulSet, 2 s for the Deployment, no
    // initialDelaySeconds) passes once the worker has read its share, as here. The kubelet's probe worker ticks from
    // the pod's admission, not from this start, so the first probe after the load fires at a phase uniform within the
    // period (plus ~10 ms for the status write): Ready may land before the worker's first Lease (10-120 ms after its
    // load), as failover.ts's probe allows.
    const periodMs = this.pool.kind === 'StatefulSet' ? PROBE.periodMs : 2000;
    this.timeline.after(this.rng.int(10, periodMs + 9), () => {
      if (!proc.alive) return;
      this.updatePod(uid, (p) => (p.ready ? p : { ...p, ready: true, readinessChangedAt: this.timeline.now }));
      this.truth.pod(pod.name, 'ready');
    });
    if (k.crashLoopUntil !== undefined && this.timeline.now < k.crashLoopUntil) this.timeline.after(this.rng.seconds(0.5, 4), () => this.crash(uid, 'crash-loop'));
  }

  /** The ConfigMap's config.yml now (what a kubelet delivers). */
  private configText(): string | undefined {
    return this.store.peek<ConfigMapObj>('ConfigMap', podKey(this.ns, this.pool.configMap))?.data[this.pool.configKey];
  }

  private deliverBy(k: Kubelet, at: number): void {
    if (k.deliveryAt !== undefined && k.deliveryAt <= at) return;
    k.deliveryAt = at;
    this.timeline.schedule(at, () => {
      if (k.deliveryAt !== at) return;
      k.deliveryAt = undefined;
      const text = this.configText();
      if (text === k.volume) return;
      k.volume = text;
      const proc = k.proc;
      if (proc?.alive && proc.template.reload === 'hot') this.timeline.after(this.slowDelay(5, 60), () => proc.alive && this.load(proc, k.volume));
    });
  }

  private slowDelay(lo: number, hi: number): number {
    return this.rng.int(lo, hi) + (this.timeline.now < this.slowUntil ? this.rng.seconds(1, 15) : 0);
  }

  /** A worker reads config.yml (at start, or on a reload): the reference worker's transition. */
  private load(proc: Proc, text: string | undefined): void {
    if (proc.view && this.failover?.intercept(proc.view, text)) return;
    const step = nextState(proc.state, text, proc.pod, parse, new Date(EPOCH + this.timeline.now));
    this.apply(proc, step.state);
    this.acknowledge(proc);
    if (proc.view) this.failover?.recheck(proc.view);
  }

  /** The process as the failover model sees it, and what it may do to it. */
  private viewOf(proc: Proc): FailoverProc & { proc: Proc } {
    proc.view ??= {
      id: proc.id,
      pod: proc.pod,
      podUid: proc.podUid,
      get alive() {
        return proc.alive;
      },
      get running() {
        return proc.running;
      },
      get configVersion() {
        return proc.state.configVersion;
      },
      get loaded() {
        return proc.state.loadedAt !== undefined;
      },
      get stopping() {
        return proc.state.stopping;
      },
      proc,
    };
    return proc.view;
  }

  /** The failover model's hands on the cluster (failover.ts FailoverHost). */
  failoverHost() {
    const procOf = (v: FailoverProc) => (v as FailoverProc & { proc: Proc }).proc;
    return {
      stopAll: (v: FailoverProc) => {
        const proc = procOf(v);
        this.apply(proc, { ...proc.state, share: { jobs: [], version: proc.state.share.version } });
        this.acknowledge(proc);
      },
      load: (v: FailoverProc, text: string | undefined) => this.load(procOf(v), text),
      reload: (v: FailoverProc) => this.load(procOf(v), this.kubelets.get(v.podUid)?.volume),
      reacknowledge: (v: FailoverProc) => {
        procOf(v).acked = '';
        this.acknowledge(procOf(v));
      },
      setReady: (v: FailoverProc, ready: boolean) => {
        const pod = this.podOf(v.podUid);
        if (!pod || pod.ready === ready) return;
        this.updatePod(v.podUid, (p) => ({ ...p, ready, readinessChangedAt: this.timeline.now }));
        this.truth.pod(pod.name, ready ? 'ready' : 'unready');
      },
      restart: (v: FailoverProc, how: string) => this.crash(v.podUid, how),
      ackSaysFenced: (v: FailoverProc) => {
        const lease = this.store.peek<LeaseObj>('Lease', podKey(this.ns, v.pod));
        return lease?.holderIdentity === v.podUid && lease.annotations['k8slab.info/fenced'] === 'true';
      },
    };
  }

  /** A failover fault on one live worker process that heartbeats. */
  failoverFault(kind: 'freeze' | 'partition' | 'hang', pick: number, forMs: number): void {
    const procs = this.livePodUids().flatMap((uid) => (this.kubelets.get(uid)?.proc?.view ? [this.kubelets.get(uid)!.proc!.view!] : []));
    if (!this.failover || procs.length === 0) return;
    const v = procs[pick % procs.length]!;
    if (kind === 'freeze') this.failover.freeze(v, forMs);
    else if (kind === 'partition') this.failover.partition(v, forMs);
    else this.failover.hang(v, forMs);
  }

  private apply(proc: Proc, state: WorkerState): void {
    proc.state = state;
    const want = new Set(state.share.jobs);
    for (const job of [...proc.running]) {
      if (want.has(job)) continue;
      proc.running.delete(job);
      this.truth.stopped(proc.id, job);
    }
    for (const job of want) {
      if (proc.running.has(job)) continue;
      proc.running.add(job);
      this.truth.started(proc.id, proc.pod, job);
    }
  }

  private acknowledge(proc: Proc): void {
    // Fenced, waiting for an empty share, it says so (W27): at the version it holds if it applied none yet.
    const fence = proc.view && this.failover ? this.failover.fenceOf(proc.view) : { fenced: false };
    const version = proc.state.configVersion ?? (fence.fenced ? fence.heldVersion : undefined);
    if (!proc.template.acknowledges || version === undefined || proc.state.stopping) return;
    const jobs = [...proc.state.share.jobs];
    const said = `${version}:${fence.fenced}:${jobs.join(',')}`;
    if (said === proc.acked) return;
    proc.acked = said;
    this.timeline.after(this.slowDelay(10, 120), () => {
      if (!proc.alive || proc.acked !== said) return;
      // Out of reach (partitioned, frozen): given up; written again once it is back (failover.ts).
      if (proc.view && this.failover && !this.failover.reachable(proc.view)) {
        proc.acked = '';
        return;
      }
      const lease: LeaseObj = {
        name: proc.pod,
        namespace: this.ns,
        holderIdentity: proc.podUid,
        labels: { 'k8slab.info/swarm': this.pool.name },
        annotations: {
          'k8slab.info/config-version': String(version),
          'k8slab.info/jobs-digest': jobsDigest(jobs),
          'k8slab.info/loaded-at': stamp(this.timeline.now),
          ...(proc.view && this.failover ? { 'k8slab.info/worker-protocol': this.failover.protocol } : {}),
          ...(fence.fenced ? { 'k8slab.info/fenced': 'true' } : {}),
        },
      };
      this.store.put('Lease', podKey(this.ns, proc.pod), lease);
      this.truth.acknowledged(proc.id, jobs);
    });
  }

  /** SIGTERM: the reference worker drains (drain.ts) when its jobs are handed over, else stops at once. */
  private terminate(uid: string): void {
    const pod = this.podOf(uid);
    const k = this.kubelets.get(uid);
    if (!pod || !k) return;
    const grace = (pod.deletion?.at ?? this.timeline.now) + pod.template.graceSeconds * 1000;
    const proc = k.proc;
    if (!proc?.alive) {
      this.timeline.after(this.rng.int(100, 800), () => this.removePod(uid));
      return;
    }
    // Nobody serving to hand its jobs to (a pool of one, every peer down): a disruption Swarm cannot stage.
    const peers = this.pods().filter((p) => p.uid !== uid && p.ready && !p.deletion);
    if (peers.length === 0) this.truth.failed(proc.id, 'stopped with no serving peer to hand over to');
    this.timeline.schedule(grace, () => {
      if (!proc.alive) return;
      // SIGKILL at the end of the grace period.
      this.truth.failed(proc.id, 'killed at the end of its grace period');
      this.exit(proc, uid);
    });
    const poll = () => {
      if (!proc.alive) return;
      const departure = this.departure(proc.pod);
      const cm = this.store.peek<ConfigMapObj>('ConfigMap', podKey(this.ns, this.pool.configMap));
      const read = cm ? { text: cm.data[this.pool.configKey], handover: cm.annotations['k8slab.info/handover'] === 'MakeBeforeBreak' } : undefined;
      if (departure === 'ended' || !waitsOn(read, departure, proc.pod, parse)) {
        this.apply(proc, stopAll(proc.state).state);
        this.exit(proc, uid);
        return;
      }
      this.timeline.after(500, poll);
    };
    poll();
  }

  private departure(pod: string): Departure {
    if (this.pool.kind === 'Deployment') return 'leaving';
    const sts = this.store.peek<StatefulSetObj>('StatefulSet', podKey(this.ns, this.pool.name));
    return departureOf(this.pool.name, pod, sts ? { start: sts.startOrdinal, replicas: sts.replicas } : undefined);
  }

  private exit(proc: Proc, uid: string): void {
    for (const job of [...proc.running]) {
      proc.running.delete(job);
      this.truth.stopped(proc.id, job);
    }
    proc.alive = false;
    this.timeline.after(this.rng.int(100, 800), () => this.removePod(uid));
  }

  private removePod(uid: string): void {
    const pod = this.podOf(uid);
    if (!pod) return;
    this.kubelets.delete(uid);
    this.store.remove('Pod', podKey(pod.namespace, pod.name));
    this.truth.pod(pod.name, 'gone');
  }

  // --- faults -----------------------------------------------------------------
  /** The worker process dies; the kubelet restarts it after CrashLoopBackOff's delay. */
  crash(uid: string, how = 'crash'): void {
    const k = this.kubelets.get(uid);
    const proc = k?.proc;
    const pod = this.podOf(uid);
    if (!k || !proc?.alive || !pod) return;
    this.truth.failed(proc.id, how);
    for (const job of [...proc.running]) {
      proc.running.delete(job);
      this.truth.stopped(proc.id, job);
    }
    proc.alive = false;
    if (pod.deletion) {
      this.timeline.after(this.rng.int(100, 800), () => this.removePod(uid));
      return;
    }
    const backoff = Math.min(300, 10 * 2 ** k.restarts) * 1000;
    k.restarts += 1;
    this.timeline.after(this.rng.seconds(0.3, 1.5), () => {
      this.updatePod(uid, (p) => ({ ...p, ready: false, readinessChangedAt: this.timeline.now, waiting: { reason: 'CrashLoopBackOff', message: `back-off ${backoff / 1000}s restarting failed container` } }));
      this.truth.pod(pod.name, 'unready');
    });
    this.timeline.after(backoff, () => this.startContainer(uid));
  }

  crashLoop(uid: string, untilMs: number): void {
    const k = this.kubelets.get(uid);
    if (!k) return;
    k.crashLoopUntil = untilMs;
    this.crash(uid, 'crash-loop');
  }

  livePodUids(): string[] {
    return this.pods()
      .filter((p) => !p.deletion && this.kubelets.get(p.uid)?.proc?.alive)
      .map((p) => p.uid);
  }

  // --- the StatefulSet controller ---------------------------------------------
  private kickStatefulSet(): void {
    if (this.pool.kind !== 'StatefulSet' || this.stsPending) return;
    this.stsPending = true;
    this.timeline.after(this.rng.int(5, 60), () => {
      this.stsPending = false;
      this.reconcileStatefulSet();
    });
  }

  private reconcileStatefulSet(): void {
    const key = podKey(this.ns, this.pool.name);
    const sts = this.store.peek<StatefulSetObj>('StatefulSet', key);
    if (!sts) return;
    const pods = this.pods().filter((p) => p.ownerStatefulSet === sts.name);
    const byName = new Map(pods.map((p) => [p.name, p]));
    const wanted = Array.from({ length: sts.replicas }, (_, i) => sts.startOrdinal + i);
    const wantedNames = new Set(wanted.map((o) => `${sts.name}-${o}`));
    const healthy = (p: PodObj) => p.phase === 'Running' && p.ready && !p.deletion;
    const ordered = sts.podManagementPolicy === 'OrderedReady';
    // Create what is missing (OrderedReady: one at a time, lowest first, once all before it are Ready).
    for (const ordinal of wanted) {
      const name = `${sts.name}-${ordinal}`;
      const existing = byName.get(name);
      if (existing) {
        if (ordered && !healthy(existing)) break;
        continue;
      }
      this.createPod(name, sts.template, { sts: sts.name });
      if (ordered) break;
    }
    // Delete the pods past the replicas (highest first; OrderedReady: one at a time, once the rest are Ready).
    const extra = pods.filter((p) => !wantedNames.has(p.name) && !p.deletion).sort((a, b) => ordinalOf(b.name) - ordinalOf(a.name));
    const terminating = pods.some((p) => p.deletion);
    if (extra.length > 0 && (!ordered || (!terminating && pods.filter((p) => wantedNames.has(p.name)).every(healthy)))) {
      for (const p of ordered ? extra.slice(0, 1) : extra) this.deletePod(p, 'statefulset-controller');
    } else if (extra.length === 0) {
      // A rolling update: the highest pod of an old revision, once every pod is Ready.
      const old = pods.filter((p) => wantedNames.has(p.name) && p.template.revision !== sts.template.revision && !p.deletion).sort((a, b) => ordinalOf(b.name) - ordinalOf(a.name));
      if (old.length > 0 && !terminating && pods.every(healthy) && pods.length === sts.replicas) this.deletePod(old[0]!, 'statefulset-controller');
    }
    const status = { replicas: pods.length, readyReplicas: pods.filter((p) => p.ready).length };
    if (status.replicas !== sts.status.replicas || status.readyReplicas !== sts.status.readyReplicas) this.store.put('StatefulSet', key, { ...sts, status });
  }

  deletePod(p: PodObj, by: string): void {
    if (p.deletion) return;
    this.store.put('Pod', podKey(p.namespace, p.name), { ...p, deletion: { at: this.timeline.now, by } });
  }

  // --- the Deployment controller (and its ReplicaSets) ------------------------
  private kickDeployment(): void {
    if (this.pool.kind !== 'Deployment' || this.deployPending) return;
    this.deployPending = true;
    this.timeline.after(this.rng.int(5, 60), () => {
      this.deployPending = false;
      this.reconcileDeployment();
    });
  }

  private reconcileDeployment(): void {
    const key = podKey(this.ns, this.pool.name);
    const d = this.store.peek<DeploymentObj>('Deployment', key);
    if (!d) return;
    const hash = `rev${d.template.revision}`;
    const live = this.pods().filter((p) => p.ownerReplicaSet?.startsWith(`${d.name}-`) && !p.deletion);
    const fresh = live.filter((p) => p.labels['pod-template-hash'] === hash);
    const old = live.filter((p) => p.labels['pod-template-hash'] !== hash);
    const ready = live.filter((p) => p.ready).length;
    // Scale the new ReplicaSet up within the surge.
    let total = live.length;
    let freshCount = fresh.length;
    while (freshCount < d.replicas && total < d.replicas + (old.length > 0 ? d.maxSurge : 0)) {
      this.createPod(`${d.name}-${hash}-${this.rng.id(5)}`, d.template, { rs: `${d.name}-${hash}`, hash });
      freshCount++;
      total++;
    }
    // Scale down: old pods within maxUnavailable, then extra new ones (not Ready first, then the newest).
    const rank = (a: PodObj, b: PodObj) => Number(a.ready) - Number(b.ready) || b.createdAt - a.createdAt;
    let removable = Math.max(0, ready - (d.replicas - d.maxUnavailable));
    for (const p of [...old].sort(rank)) {
      if (!p.ready) this.deletePod(p, 'replicaset-controller');
      else if (removable > 0) {
        this.deletePod(p, 'replicaset-controller');
        removable--;
      }
    }
    if (fresh.length > d.replicas) for (const p of [...fresh].sort(rank).slice(0, fresh.length - d.replicas)) this.deletePod(p, 'replicaset-controller');
    const now = this.pods().filter((p) => p.ownerReplicaSet?.startsWith(`${d.name}-`) && !p.deletion);
    const status = { replicas: now.length, readyReplicas: now.filter((p) => p.ready).length };
    if (status.replicas !== d.status.replicas || status.readyReplicas !== d.status.readyReplicas) this.store.put('Deployment', key, { ...d, status });
  }
}

const ordinalOf = (name: string): number => Number(name.slice(name.lastIndexOf('-') + 1));
