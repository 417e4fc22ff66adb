// Records what happens to a namespace's pods and ConfigMaps, from a real watch,
// so a test can reconstruct the timeline afterwards: when each pod (by uid)
// was created, became Ready and was marked for deletion; every ConfigMap write.
import { KubeConfig, Watch } from '@kubernetes/client-node';

export interface PodLife {
  name: string;
  uid: string;
  createdAt: number;
  readyAt?: number;
  deletingAt?: number;
}

export interface ConfigMapWrite {
  name: string;
  resourceVersion: string;
  at: number;
  data: Record<string, string>;
  annotations: Record<string, string>;
}

interface PodObject {
  metadata: { name: string; uid: string; deletionTimestamp?: unknown };
  status?: { conditions?: Array<{ type: string; status: string }> };
}
interface ConfigMapObject {
  metadata: { name: string; resourceVersion: string; annotations?: Record<string, string> };
  data?: Record<string, string>;
}

export class Timeline {
  pods = new Map<string, PodLife>();
  configMapWrites: ConfigMapWrite[] = [];
  private aborts: AbortController[] = [];

  static async start(kubeconfig: string, namespace: string): Promise<Timeline> {
    const t = new Timeline();
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfig);
    const watch = new Watch(kc);
    const noop = () => {};
    t.aborts.push(
      await watch.watch(`/api/v1/namespaces/${namespace}/pods`, {}, (phase, obj: PodObject) => t.onPod(phase, obj), noop),
      await watch.watch(`/api/v1/namespaces/${namespace}/configmaps`, {}, (phase, obj: ConfigMapObject) => t.onConfigMap(phase, obj), noop),
    );
    return t;
  }

  private onPod(phase: string, pod: PodObject): void {
    const now = Date.now();
    const uid = pod.metadata.uid;
    const life = this.pods.get(uid) ?? { name: pod.metadata.name, uid, createdAt: now };
    const ready = pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    if (ready && life.readyAt === undefined) life.readyAt = now;
    if ((pod.metadata.deletionTimestamp || phase === 'DELETED') && life.deletingAt === undefined) life.deletingAt = now;
    this.pods.set(uid, life);
  }

  private onConfigMap(phase: string, cm: ConfigMapObject): void {
    if (phase !== 'ADDED' && phase !== 'MODIFIED') return;
    if (this.configMapWrites.some((w) => w.name === cm.metadata.name && w.resourceVersion === cm.metadata.resourceVersion)) return;
    this.configMapWrites.push({
      name: cm.metadata.name,
      resourceVersion: cm.metadata.resourceVersion,
      at: Date.now(),
      data: { ...(cm.data ?? {}) },
      annotations: { ...(cm.metadata.annotations ?? {}) },
    });
  }

  /** Lives of the pods named `name`, oldest first. */
  livesOf(name: string): PodLife[] {
    return [...this.pods.values()].filter((p) => p.name === name).sort((a, b) => a.createdAt - b.createdAt);
  }

  stop(): void {
    this.aborts.forEach((a) => a.abort());
  }
}

/** Polls until `check` returns a value (not undefined/false), or fails with the last observation. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 90_000, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
