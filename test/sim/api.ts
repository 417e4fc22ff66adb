// The API server as each function instance's client sees it: the project's own
// Kubernetes port (lib/kube/client.ts KubeClient) served from the Store, one
// request at a time on the simulated clock. Each request takes a drawn latency;
// while a fault says so it fails (409, 429, 5xx, a timeout after or before the
// write took effect) or is served from a lagging cache (a stale read). A killed
// instance's requests never complete. Guards are the API server's: writes carry
// resourceVersion, deletes and pod patches uid + resourceVersion preconditions.
import type { Swarm } from '../../lib/api/types.js';
import type { AnnotateOutcome, DeleteOutcome, KubeClient } from '../../lib/kube/client.js';
import { KubeError } from '../../lib/kube/errors.js';
import type { ConfigMapPatch, ConfigMapView, EventView, LeaseView, PodView, ScaleView } from '../../lib/kube/types.js';
import { deploymentView, podKey, podView, statefulSetView, type ConfigMapObj, type DeploymentObj, type LeaseObj, type PodObj, type StatefulSetObj } from './model.js';
import type { Rng } from './rng.js';
import type { Kind, Store, Stored } from './store.js';
import { mergeStrings } from '../support/merge-patch.js';

/** What the API does to one request, decided by the world's faults (faults.ts). */
export type Interference =
  | { kind: 'none' }
  | { kind: 'stale'; lagMs: number }
  | { kind: 'error'; status: 409 | 429 | 500 | 503 }
  /** The request times out at the client; a write may have taken effect first. */
  | { kind: 'timeout'; applied: boolean };

export interface ApiHost {
  now(): number;
  /** Runs `fn` at simulated time `at`, then lets the promises it settled run. */
  at(at: number, fn: () => void): void;
  interfere(instance: string, op: string, write: boolean): Interference;
  latency(): number;
  /** A request was answered (`stale`: from the lagging cache). */
  served(instance: string, op: string, result: unknown, stale: boolean): void;
  /** A Kubernetes Event was recorded. */
  recorded(event: EventView): void;
}

export interface Instance {
  readonly id: string;
  dead: boolean;
}

const labelsMatch = (labels: Record<string, string>, selector: string): boolean =>
  termsOf(selector).every(([k, v]) => (v === undefined ? k in labels : labels[k] === v));

/** A selector's terms, split once per selector (every list request filters every object by it). */
const terms = new Map<string, ReadonlyArray<readonly [string, string | undefined]>>();
function termsOf(selector: string): ReadonlyArray<readonly [string, string | undefined]> {
  let t = terms.get(selector);
  if (!t) {
    t = selector
      .split(',')
      .filter((s) => s !== '')
      .map((term) => {
        const [k, v] = term.split('=');
        return [k!, v] as const;
      });
    if (terms.size >= 256) terms.clear();
    terms.set(selector, t);
  }
  return t;
}

export class SimKube implements KubeClient {
  constructor(
    private readonly store: Store,
    private readonly host: ApiHost,
    private readonly instance: Instance,
    private readonly rng: Rng,
  ) {}

  private request<T>(op: string, write: boolean, serve: (readAt: number | undefined) => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const done = this.host.now() + this.host.latency();
      this.host.at(done, () => {
        if (this.instance.dead) return; // the process is gone: nobody hears the answer
        const i = this.host.interfere(this.instance.id, op, write);
        const operation = `${op} (simulated)`;
        if (i.kind === 'error') return reject(new KubeError(i.status === 409 ? 'Conflict' : 'Transient', i.status, `injected ${i.status}`, operation));
        if (i.kind === 'timeout') {
          if (write && i.applied) {
            try {
              serve(undefined);
            } catch {
              // refused anyway: the client never knows
            }
          }
          return reject(new KubeError('Transient', 504, 'injected timeout', operation));
        }
        try {
          const readAt = i.kind === 'stale' && !write ? this.host.now() - i.lagMs : undefined;
          const result = serve(readAt);
          this.host.served(this.instance.id, op, result, readAt !== undefined);
          resolve(result);
        } catch (err) {
          reject(err);
        }
      });
    });
  }

  private read<T>(kind: Kind, key: string, at: number | undefined): Stored<T> | undefined {
    return at === undefined ? this.store.get<T>(kind, key) : this.store.getAt<T>(kind, key, at);
  }

  private readAll<T>(kind: Kind, at: number | undefined): Array<Stored<T>> {
    return at === undefined ? this.store.list<T>(kind) : this.store.listAt<T>(kind, at);
  }

  // --- Swarms ---------------------------------------------------------------
  getSwarm(namespace: string, name: string): Promise<Swarm | undefined> {
    return this.request('getSwarm', false, (at) => swarmView(this.read<Swarm>('Swarm', podKey(namespace, name), at)));
  }

  listSwarmsNaming(namespace: string, name: string, kind: 'StatefulSet' | 'Deployment' = 'StatefulSet'): Promise<Swarm[]> {
    return this.request('listSwarmsNaming', false, (at) =>
      this.readAll<Swarm>('Swarm', at)
        .filter((s) => s.value.metadata.namespace === namespace && (kind === 'Deployment' ? s.value.spec.deploymentName : s.value.spec.statefulSetName) === name)
        .map((s) => swarmView(s)!),
    );
  }

  listSwarmNames(namespace: string): Promise<string[]> {
    return this.request('listSwarmNames', false, (at) => this.readAll<Swarm>('Swarm', at).filter((s) => s.value.metadata.namespace === namespace).map((s) => s.value.metadata.name));
  }

  replaceSwarmStatus(swarm: Swarm): Promise<Swarm> {
    return this.request('replaceSwarmStatus', true, () => {
      const key = podKey(swarm.metadata.namespace, swarm.metadata.name);
      const current = this.store.get<Swarm>('Swarm', key);
      if (!current) throw new KubeError('NotFound', 404, 'swarm not found', 'replaceSwarmStatus', 'UPDATE');
      if (String(current.rv) !== swarm.metadata.resourceVersion) throw new KubeError('Conflict', 409, 'the object has been modified', 'replaceSwarmStatus', 'UPDATE');
      // The store keeps its own frozen copy; the answer is that copy.
      this.store.put<Swarm>('Swarm', key, { ...current.value, status: swarm.status ?? {} });
      return swarmView(this.store.get<Swarm>('Swarm', key))!;
    });
  }

  // --- pools ----------------------------------------------------------------
  getStatefulSet(namespace: string, name: string) {
    return this.request('getStatefulSet', false, (at) => {
      const s = this.read<StatefulSetObj>('StatefulSet', podKey(namespace, name), at);
      return s ? statefulSetView(s.value, s.rv) : undefined;
    });
  }

  getStatefulSetScale(namespace: string, name: string): Promise<ScaleView | undefined> {
    return this.request('getStatefulSetScale', false, (at) => {
      const s = this.read<StatefulSetObj>('StatefulSet', podKey(namespace, name), at);
      return s ? { name, namespace, resourceVersion: String(s.rv), replicas: s.value.replicas } : undefined;
    });
  }

  replaceStatefulSetScale(scale: ScaleView): Promise<ScaleView> {
    return this.request('replaceStatefulSetScale', true, () => {
      const key = podKey(scale.namespace, scale.name);
      const s = this.store.get<StatefulSetObj>('StatefulSet', key);
      if (!s) throw new KubeError('NotFound', 404, 'statefulset not found', 'replaceStatefulSetScale', 'UPDATE');
      if (String(s.rv) !== scale.resourceVersion) throw new KubeError('Conflict', 409, 'the object has been modified', 'replaceStatefulSetScale', 'UPDATE');
      const rv = this.store.put('StatefulSet', key, { ...s.value, replicas: scale.replicas });
      return { ...scale, resourceVersion: String(rv) };
    });
  }

  getDeployment(namespace: string, name: string) {
    return this.request('getDeployment', false, (at) => {
      const d = this.read<DeploymentObj>('Deployment', podKey(namespace, name), at);
      return d ? deploymentView(d.value, d.rv) : undefined;
    });
  }

  getDeploymentScale(namespace: string, name: string): Promise<ScaleView | undefined> {
    return this.request('getDeploymentScale', false, (at) => {
      const d = this.read<DeploymentObj>('Deployment', podKey(namespace, name), at);
      return d ? { name, namespace, resourceVersion: String(d.rv), replicas: d.value.replicas } : undefined;
    });
  }

  replaceDeploymentScale(scale: ScaleView): Promise<ScaleView> {
    return this.request('replaceDeploymentScale', true, () => {
      const key = podKey(scale.namespace, scale.name);
      const d = this.store.get<DeploymentObj>('Deployment', key);
      if (!d) throw new KubeError('NotFound', 404, 'deployment not found', 'replaceDeploymentScale', 'UPDATE');
      if (String(d.rv) !== scale.resourceVersion) throw new KubeError('Conflict', 409, 'the object has been modified', 'replaceDeploymentScale', 'UPDATE');
      const rv = this.store.put('Deployment', key, { ...d.value, replicas: scale.replicas });
      return { ...scale, resourceVersion: String(rv) };
    });
  }

  // --- workers --------------------------------------------------------------
  listPods(namespace: string, labelSelector: string): Promise<PodView[]> {
    return this.request('listPods', false, (at) =>
      this.readAll<PodObj>('Pod', at)
        .filter((p) => p.value.namespace === namespace && labelsMatch(p.value.labels, labelSelector))
        .map((p) => podView(p.value, p.rv)),
    );
  }

  listLeases(namespace: string, labelSelector: string): Promise<LeaseView[]> {
    return this.request('listLeases', false, (at) =>
      this.readAll<LeaseObj>('Lease', at)
        .filter((l) => l.value.namespace === namespace && labelsMatch(l.value.labels, labelSelector))
        .map((l) => ({ ...l.value, resourceVersion: String(l.rv) })),
    );
  }

  annotatePod(namespace: string, name: string, pre: { uid: string; resourceVersion: string }, annotations: Record<string, string>): Promise<AnnotateOutcome> {
    return this.request('annotatePod', true, () => {
      const key = podKey(namespace, name);
      const p = this.store.get<PodObj>('Pod', key);
      if (!p) return 'gone';
      if (p.value.uid !== pre.uid || String(p.rv) !== pre.resourceVersion) return 'precondition-failed';
      this.store.put('Pod', key, { ...p.value, annotations: { ...p.value.annotations, ...annotations } });
      return 'annotated';
    });
  }

  deletePod(namespace: string, name: string, pre: { uid: string; resourceVersion: string }): Promise<DeleteOutcome> {
    return this.request('deletePod', true, () => {
      const key = podKey(namespace, name);
      const p = this.store.get<PodObj>('Pod', key);
      if (!p) return 'gone';
      if (p.value.uid !== pre.uid || String(p.rv) !== pre.resourceVersion) return 'precondition-failed';
      if (!p.value.deletion) this.store.put('Pod', key, { ...p.value, deletion: { at: this.host.now(), by: `swarm:${this.instance.id}` } });
      return 'deleted';
    });
  }

  // --- the ConfigMap ----------------------------------------------------------
  getConfigMap(namespace: string, name: string): Promise<ConfigMapView | undefined> {
    return this.request('getConfigMap', false, (at) => {
      const c = this.read<ConfigMapObj>('ConfigMap', podKey(namespace, name), at);
      return c ? { ...c.value, resourceVersion: String(c.rv) } : undefined;
    });
  }

  createConfigMap(cm: ConfigMapView): Promise<ConfigMapView> {
    return this.request('createConfigMap', true, () => {
      const key = podKey(cm.namespace, cm.name);
      if (this.store.get('ConfigMap', key)) throw new KubeError('Conflict', 409, 'configmaps already exists', 'createConfigMap', 'CREATE');
      const { resourceVersion: _ignored, ...rest } = structuredClone(cm);
      const stored: ConfigMapObj = { ...rest, uid: `cm-${this.rng.id(8)}` };
      const rv = this.store.put('ConfigMap', key, stored);
      return { ...stored, resourceVersion: String(rv) };
    });
  }

  patchConfigMap(patch: ConfigMapPatch): Promise<ConfigMapView> {
    return this.request('patchConfigMap', true, () => {
      const key = podKey(patch.namespace, patch.name);
      const c = this.store.get<ConfigMapObj>('ConfigMap', key);
      if (!c) throw new KubeError('NotFound', 404, 'configmap not found', 'patchConfigMap', 'PATCH');
      if (String(c.rv) !== patch.resourceVersion) throw new KubeError('Conflict', 409, 'the object has been modified', 'patchConfigMap', 'PATCH');
      const next: ConfigMapObj = {
        ...c.value,
        labels: mergeStrings(c.value.labels, patch.labels),
        annotations: mergeStrings(c.value.annotations, patch.annotations),
        data: mergeStrings(c.value.data, patch.data),
        ...(patch.ownerReferences ? { ownerReferences: structuredClone(patch.ownerReferences) } : {}),
      };
      const rv = this.store.put('ConfigMap', key, next);
      return { ...next, resourceVersion: String(rv) };
    });
  }

  createEvent(event: EventView): Promise<void> {
    return this.request('createEvent', true, () => this.host.recorded(structuredClone(event)));
  }
}

function swarmView(s: Stored<Swarm> | undefined): Swarm | undefined {
  if (!s) return undefined;
  return { ...s.value, metadata: { ...s.value.metadata, resourceVersion: String(s.rv) } };
}
