// An in-memory KubeClient for unit tests of the reconcilers: a stub of our own
// interface (not an API server), with the two behaviours the reconcilers rely
// on — resourceVersion-guarded writes and uid/resourceVersion-preconditioned
// deletes — plus a write log and fault injection. Pod lifecycles (the
// StatefulSet controller, readiness) are driven by the test itself.
import type { Swarm } from '../../lib/api/types.js';
import type { AnnotateOutcome, DeleteOutcome, KubeClient } from '../../lib/kube/client.js';
import { KubeError } from '../../lib/kube/errors.js';
import { parse } from '../../lib/workerconfig/index.js';
import { CONFIG_REFRESH_ANNOTATION, type ConfigMapPatch, type ConfigMapView, type DeploymentView, type EventView, type LeaseView, type PodView, type ScaleView, type StatefulSetView } from '../../lib/kube/types.js';
import { mergeStrings } from './merge-patch.js';

export type Op = keyof KubeClient;
export interface Write {
  op: Op;
  name: string;
}

export class MemoryKube implements KubeClient {
  swarms = new Map<string, Swarm>();
  statefulSets = new Map<string, StatefulSetView>();
  deployments = new Map<string, DeploymentView>();
  configMaps = new Map<string, ConfigMapView>();
  pods = new Map<string, PodView>();
  leases = new Map<string, LeaseView>();
  events: EventView[] = [];
  writes: Write[] = [];
  /** Every call made, reads and writes, in order (faulted ones included): what a reconcile costs in requests. */
  calls: Op[] = [];
  /** Every 409 Conflict answered, by call. */
  conflicts: Op[] = [];
  private rv = 100;
  private uidSeq = 0;
  private faults: Array<{ op: Op; error: KubeError; times: number }> = [];
  /** Runs before each call (after fault checks): lets a test interleave concurrent writers. */
  beforeCall?: (op: Op) => Promise<void> | void;

  nextRv = (): string => String(++this.rv);
  nextUid = (prefix = 'uid'): string => `${prefix}-${++this.uidSeq}`;

  /** The next `times` calls of `op` fail with `error` (default: a transient 503). */
  fail(op: Op, times = 1, error = new KubeError('Transient', 503, `injected ${op} failure`, op)): void {
    this.faults.push({ op, error, times });
  }

  /** Drops every injected fault (the cause was fixed). */
  heal(): void {
    this.faults = [];
  }

  private async enter(op: Op): Promise<void> {
    this.calls.push(op);
    const fault = this.faults.find((f) => f.op === op && f.times > 0);
    if (fault) {
      fault.times -= 1;
      throw fault.error;
    }
    await this.beforeCall?.(op);
  }

  private record(op: Op, name: string): void {
    this.writes.push({ op, name });
  }

  // --- seeding helpers -----------------------------------------------------
  addSwarm(swarm: Swarm): Swarm {
    const stored = structuredClone(swarm);
    stored.metadata.uid ??= this.nextUid('swarm');
    stored.metadata.resourceVersion = this.nextRv();
    stored.metadata.generation ??= 1;
    stored.metadata.creationTimestamp ??= '2026-01-01T00:00:00Z';
    this.swarms.set(`${stored.metadata.namespace}/${stored.metadata.name}`, stored);
    return stored;
  }

  updateSwarmSpec(namespace: string, name: string, mutate: (s: Swarm) => void): void {
    const s = this.swarms.get(`${namespace}/${name}`);
    if (!s) throw new Error('no such swarm');
    mutate(s);
    s.metadata.generation = (s.metadata.generation ?? 1) + 1;
    s.metadata.resourceVersion = this.nextRv();
  }

  /** The StatefulSet's resourceVersion (the scale subresource's), bumped by every change here. */
  statefulSetRvs = new Map<string, string>();

  setStatefulSet(namespace: string, name: string, replicas: number, startOrdinal?: number): void {
    const existing = this.statefulSets.get(`${namespace}/${name}`);
    const start = startOrdinal ?? existing?.startOrdinal;
    this.statefulSets.set(`${namespace}/${name}`, {
      name,
      namespace,
      uid: existing?.uid ?? this.nextUid('sts'),
      replicas,
      ...(start ? { startOrdinal: start } : {}),
      labelSelector: `app=${name}`,
    });
    this.statefulSetRvs.set(`${namespace}/${name}`, this.nextRv());
  }

  setDeployment(namespace: string, name: string, replicas: number): void {
    const existing = this.deployments.get(`${namespace}/${name}`);
    this.deployments.set(`${namespace}/${name}`, { kind: 'Deployment', name, namespace, uid: existing?.uid ?? this.nextUid('deploy'), replicas, labelSelector: `app=${name}` });
    this.statefulSetRvs.set(`deploy:${namespace}/${name}`, this.nextRv());
  }

  /** Creates a Deployment's pod, as its ReplicaSet would: `<deployment>-<hash>-<suffix>`, a new uid. */
  startDeploymentPod(namespace: string, deployment: string, suffix: string, options: { ready?: boolean; hash?: string; createdAt?: string } = {}): PodView {
    const hash = options.hash ?? 'h1';
    const name = `${deployment}-${hash}-${suffix}`;
    const pod: PodView = {
      name,
      namespace,
      uid: this.nextUid('pod'),
      resourceVersion: this.nextRv(),
      creationTimestamp: options.createdAt ?? '2026-01-01T00:00:00Z',
      ready: options.ready ?? true,
      terminating: false,
      labels: { app: deployment, 'pod-template-hash': hash },
      ownerReplicaSet: `${deployment}-${hash}`,
    };
    this.pods.set(`${namespace}/${name}`, pod);
    return pod;
  }

  /** (Re)creates a pod for an ordinal, as the StatefulSet controller would: a new uid. */
  startPod(namespace: string, statefulSet: string, ordinal: number, ready = true): PodView {
    const name = `${statefulSet}-${ordinal}`;
    const pod: PodView = {
      name,
      namespace,
      uid: this.nextUid('pod'),
      resourceVersion: this.nextRv(),
      creationTimestamp: '2026-01-01T00:00:00Z',
      ready,
      terminating: false,
      labels: { app: statefulSet },
      ownerStatefulSet: statefulSet,
    };
    this.pods.set(`${namespace}/${name}`, pod);
    return pod;
  }

  setReady(namespace: string, name: string, ready: boolean): void {
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) throw new Error(`no pod ${name}`);
    pod.ready = ready;
    pod.resourceVersion = this.nextRv();
  }

  /** Finishes deletions: terminating pods disappear. */
  reapTerminating(): string[] {
    const gone = [...this.pods.values()].filter((p) => p.terminating).map((p) => p.name);
    for (const [k, p] of this.pods) if (p.terminating) this.pods.delete(k);
    return gone;
  }

  configFor(namespace: string, name: string, key = 'config.yml'): string | undefined {
    return this.configMaps.get(`${namespace}/${name}`)?.data[key];
  }

  // --- KubeClient ----------------------------------------------------------
  async getSwarm(namespace: string, name: string) {
    await this.enter('getSwarm');
    const s = this.swarms.get(`${namespace}/${name}`);
    return s ? structuredClone(s) : undefined;
  }

  async listSwarmsNaming(namespace: string, name: string, kind: 'StatefulSet' | 'Deployment' = 'StatefulSet') {
    await this.enter('listSwarmsNaming');
    return [...this.swarms.values()]
      .filter((s) => s.metadata.namespace === namespace && (kind === 'Deployment' ? s.spec?.deploymentName : s.spec?.statefulSetName) === name)
      .map((s) => structuredClone(s));
  }

  async listSwarmNames(namespace: string) {
    await this.enter('listSwarmNames');
    return [...this.swarms.values()].filter((s) => s.metadata.namespace === namespace && !s.metadata.deletionTimestamp).map((s) => s.metadata.name);
  }

  async replaceSwarmStatus(swarm: Swarm) {
    await this.enter('replaceSwarmStatus');
    const key = `${swarm.metadata.namespace}/${swarm.metadata.name}`;
    const current = this.swarms.get(key);
    if (!current) throw new KubeError('NotFound', 404, 'swarm not found', 'replaceSwarmStatus');
    if (current.metadata.resourceVersion !== swarm.metadata.resourceVersion) {
      this.conflicts.push('replaceSwarmStatus');
      throw new KubeError('Conflict', 409, 'swarm resourceVersion changed', 'replaceSwarmStatus');
    }
    this.record('replaceSwarmStatus', swarm.metadata.name);
    // The status subresource ignores spec changes.
    current.status = structuredClone(swarm.status);
    current.metadata.resourceVersion = this.nextRv();
    return structuredClone(current);
  }

  async getStatefulSet(namespace: string, name: string) {
    await this.enter('getStatefulSet');
    const s = this.statefulSets.get(`${namespace}/${name}`);
    if (!s) return undefined;
    // status.replicas and status.readyReplicas, as the StatefulSet controller counts them.
    const pods = [...this.pods.values()].filter((p) => p.namespace === namespace && p.labels.app === name);
    const readyReplicas = pods.filter((p) => p.ready && !p.terminating).length;
    // The controller's status writes make new versions too: a status that changed reads as another version.
    const resourceVersion = `${this.statefulSetRvs.get(`${namespace}/${name}`) ?? ''}.${pods.length}.${readyReplicas}`;
    return { ...s, resourceVersion, observedReplicas: pods.length, readyReplicas };
  }

  async getDeployment(namespace: string, name: string) {
    await this.enter('getDeployment');
    const d = this.deployments.get(`${namespace}/${name}`);
    if (!d) return undefined;
    const pods = [...this.pods.values()].filter((p) => p.namespace === namespace && p.labels.app === name && !p.terminating);
    const readyReplicas = pods.filter((p) => p.ready).length;
    const resourceVersion = `${this.statefulSetRvs.get(`deploy:${namespace}/${name}`) ?? ''}.${pods.length}.${readyReplicas}`;
    return { ...d, resourceVersion, observedReplicas: pods.length, readyReplicas };
  }

  async getDeploymentScale(namespace: string, name: string): Promise<ScaleView | undefined> {
    await this.enter('getDeploymentScale');
    const d = this.deployments.get(`${namespace}/${name}`);
    if (!d) return undefined;
    return { name, namespace, resourceVersion: this.statefulSetRvs.get(`deploy:${namespace}/${name}`) ?? '', replicas: d.replicas };
  }

  /** Resizes the Deployment (its pods are the test's to start and stop), guarded by resourceVersion. */
  async replaceDeploymentScale(scale: ScaleView): Promise<ScaleView> {
    await this.enter('replaceDeploymentScale');
    const key = `deploy:${scale.namespace}/${scale.name}`;
    if (!this.deployments.has(`${scale.namespace}/${scale.name}`)) throw new KubeError('NotFound', 404, 'deployment not found', 'replaceDeploymentScale', 'UPDATE');
    if (!scale.resourceVersion || this.statefulSetRvs.get(key) !== scale.resourceVersion) {
      this.conflicts.push('replaceDeploymentScale');
      throw new KubeError('Conflict', 409, 'deployment resourceVersion changed', 'replaceDeploymentScale', 'UPDATE');
    }
    this.record('replaceDeploymentScale', scale.name);
    this.setDeployment(scale.namespace, scale.name, scale.replicas);
    return { ...scale, resourceVersion: this.statefulSetRvs.get(key) ?? '' };
  }

  async getStatefulSetScale(namespace: string, name: string): Promise<ScaleView | undefined> {
    await this.enter('getStatefulSetScale');
    const s = this.statefulSets.get(`${namespace}/${name}`);
    if (!s) return undefined;
    return { name, namespace, resourceVersion: this.statefulSetRvs.get(`${namespace}/${name}`) ?? '', replicas: s.replicas };
  }

  /** Resizes the StatefulSet (its pods are the test's to start and stop), guarded by resourceVersion. */
  async replaceStatefulSetScale(scale: ScaleView): Promise<ScaleView> {
    await this.enter('replaceStatefulSetScale');
    const key = `${scale.namespace}/${scale.name}`;
    const s = this.statefulSets.get(key);
    if (!s) throw new KubeError('NotFound', 404, 'statefulset not found', 'replaceStatefulSetScale', 'UPDATE');
    if (!scale.resourceVersion || this.statefulSetRvs.get(key) !== scale.resourceVersion) {
      this.conflicts.push('replaceStatefulSetScale');
      throw new KubeError('Conflict', 409, 'statefulset resourceVersion changed', 'replaceStatefulSetScale', 'UPDATE');
    }
    this.record('replaceStatefulSetScale', scale.name);
    this.setStatefulSet(scale.namespace, scale.name, scale.replicas);
    return { ...scale, resourceVersion: this.statefulSetRvs.get(key) ?? '' };
  }

  async listPods(namespace: string, labelSelector: string) {
    await this.enter('listPods');
    const [k, v] = labelSelector.split('=');
    return [...this.pods.values()]
      .filter((p) => p.namespace === namespace && (k === undefined || p.labels[k] === v))
      .map((p) => structuredClone(p));
  }

  async listLeases(namespace: string, labelSelector: string) {
    await this.enter('listLeases');
    const [k, v] = labelSelector.split('=');
    return [...this.leases.values()]
      .filter((l) => l.namespace === namespace && (k === undefined || l.labels[k] === v))
      .map((l) => structuredClone(l));
  }

  async getConfigMap(namespace: string, name: string) {
    await this.enter('getConfigMap');
    const c = this.configMaps.get(`${namespace}/${name}`);
    return c ? structuredClone(c) : undefined;
  }

  async createConfigMap(cm: ConfigMapView) {
    await this.enter('createConfigMap');
    const key = `${cm.namespace}/${cm.name}`;
    if (this.configMaps.has(key)) {
      this.conflicts.push('createConfigMap');
      throw new KubeError('Conflict', 409, 'configmap already exists', 'createConfigMap', 'CREATE');
    }
    this.record('createConfigMap', cm.name);
    const stored = { ...structuredClone(cm), uid: this.nextUid('cm'), resourceVersion: this.nextRv() };
    parsesBack(stored);
    this.configMaps.set(key, stored);
    return structuredClone(stored);
  }

  /** JSON merge patch semantics on the fields a ConfigMapPatch can carry; null removes a key. */
  async patchConfigMap(patch: ConfigMapPatch) {
    await this.enter('patchConfigMap');
    const key = `${patch.namespace}/${patch.name}`;
    const current = this.configMaps.get(key);
    if (!current) throw new KubeError('NotFound', 404, 'configmap not found', 'patchConfigMap', 'PATCH');
    if (!patch.resourceVersion || current.resourceVersion !== patch.resourceVersion) {
      this.conflicts.push('patchConfigMap');
      throw new KubeError('Conflict', 409, 'configmap resourceVersion changed', 'patchConfigMap', 'PATCH');
    }
    this.record('patchConfigMap', patch.name);
    const stored: ConfigMapView = {
      ...structuredClone(current),
      labels: mergeStrings(current.labels, patch.labels),
      annotations: mergeStrings(current.annotations, patch.annotations),
      data: mergeStrings(current.data, patch.data),
      ...(patch.ownerReferences ? { ownerReferences: structuredClone(patch.ownerReferences) } : {}),
      resourceVersion: this.nextRv(),
    };
    parsesBack(stored);
    this.configMaps.set(key, stored);
    return structuredClone(stored);
  }

  /** Merge-patches annotations (only the refresh annotation has a place in a PodView), guarded like a delete. */
  async annotatePod(namespace: string, name: string, pre: { uid: string; resourceVersion: string }, annotations: Record<string, string>): Promise<AnnotateOutcome> {
    await this.enter('annotatePod');
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return 'gone';
    if (pod.uid !== pre.uid || pod.resourceVersion !== pre.resourceVersion) return 'precondition-failed';
    this.record('annotatePod', name);
    const refresh = annotations[CONFIG_REFRESH_ANNOTATION];
    if (refresh !== undefined) pod.refreshVersion = Number(refresh);
    pod.resourceVersion = this.nextRv();
    return 'annotated';
  }

  async deletePod(namespace: string, name: string, pre: { uid: string; resourceVersion: string }): Promise<DeleteOutcome> {
    await this.enter('deletePod');
    const pod = this.pods.get(`${namespace}/${name}`);
    if (!pod) return 'gone';
    if (pod.uid !== pre.uid || pod.resourceVersion !== pre.resourceVersion) return 'precondition-failed';
    this.record('deletePod', name);
    pod.terminating = true;
    pod.resourceVersion = this.nextRv();
    return 'deleted';
  }

  async createEvent(event: EventView) {
    await this.enter('createEvent');
    this.record('createEvent', event.reason);
    this.events.push(structuredClone(event));
  }
}

/**
 * Every config.yml Swarm writes parses back (the reconciler remembers what it
 * wrote rather than parsing it again: shortcuts.ts rememberWritten), so the
 * stub checks what a real read would: a config that would not is a test failure.
 */
function parsesBack(cm: ConfigMapView): void {
  for (const [key, text] of Object.entries(cm.data)) {
    if (!/^workloads:/m.test(text)) continue;
    try {
      parse(text, key);
    } catch (err) {
      throw new Error(`Swarm wrote a ${key} that does not parse back: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
}
