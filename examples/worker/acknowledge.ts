// The worker library's acknowledgement (protocol: README.md, "Acknowledging
// what you run"): after a worker has really started its jobs it says so in a
// coordination.k8s.io/v1 Lease named after its pod, so Swarm observes — rather
// than infers — which version each worker runs. Written only when what it runs
// changes (no heartbeat: liveness is the pod's readiness), guarded by
// resourceVersion, transient failures retried with backoff. Usable by any Node
// worker: `createAcknowledger(...)` then `await acknowledge({ version, jobs })`.
import { readFileSync } from 'node:fs';
import type * as k8s from '@kubernetes/client-node';
import type * as KubeClient from './kube-client.js';
import {
  DIGEST_ANNOTATION,
  LOADED_AT_ANNOTATION,
  SWARM_LABEL,
  VERSION_ANNOTATION,
  jobsDigest,
  leaseName,
} from '../../lib/workerconfig/index.js';
import { parseWorker } from '../../lib/assignment/workers.js';

export interface Acknowledged {
  /** The top-level config.yml version the worker loaded. */
  version: number;
  /** The jobs it has started (its whole share). */
  jobs: readonly string[];
}

/** The three calls the library needs; createLeaseApi gives them over client-node, tests give a fake. */
export interface LeaseApi {
  /** undefined when there is none (404). */
  read(namespace: string, name: string): Promise<k8s.V1Lease | undefined>;
  create(namespace: string, lease: k8s.V1Lease): Promise<k8s.V1Lease>;
  /** Refused with 409 unless lease.metadata.resourceVersion is current. */
  replace(namespace: string, lease: k8s.V1Lease): Promise<k8s.V1Lease>;
}

export interface AcknowledgerOptions {
  pod: string;
  podUid: string;
  namespace: string;
  /** The StatefulSet the pod belongs to (label value routing the Lease's events); default: parsed from the pod name. */
  statefulSet?: string;
  api?: LeaseApi;
  now?: () => Date;
  /** Attempts per acknowledgement (default 8) and the first backoff (default 200 ms, doubling, at most 5 s). */
  attempts?: number;
  backoffMs?: number;
}

/** The Lease this worker keeps, as it should read after acknowledging `ack` (pure). */
export function leaseFor(options: { pod: string; podUid: string; namespace: string; statefulSet: string }, ack: Acknowledged, loadedAt: string, current?: k8s.V1Lease): k8s.V1Lease {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...(current?.metadata ?? {}),
      name: leaseName(options.pod),
      namespace: options.namespace,
      labels: { ...(current?.metadata?.labels ?? {}), [SWARM_LABEL]: options.statefulSet },
      annotations: {
        ...(current?.metadata?.annotations ?? {}),
        [VERSION_ANNOTATION]: String(ack.version),
        [DIGEST_ANNOTATION]: jobsDigest(ack.jobs),
        [LOADED_AT_ANNOTATION]: loadedAt,
      },
    },
    spec: { ...(current?.spec ?? {}), holderIdentity: options.podUid },
  };
}

/** The Lease already says this (a write would change nothing). */
export function alreadySays(lease: k8s.V1Lease | undefined, podUid: string, ack: Acknowledged): boolean {
  const a = lease?.metadata?.annotations ?? {};
  return lease?.spec?.holderIdentity === podUid && a[VERSION_ANNOTATION] === String(ack.version) && a[DIGEST_ANNOTATION] === jobsDigest(ack.jobs);
}

const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown; statusCode?: unknown })?.code ?? (err as { statusCode?: unknown })?.statusCode;
  return typeof code === 'number' ? code : undefined;
};
/** Worth another try: conflicts (re-read), throttling, server errors, and no answer at all. */
const transient = (status: number | undefined): boolean => status === undefined || status === 409 || status === 429 || status >= 500;

/**
 * client-node loads on the first call, not at start: it is most of a worker's
 * start-up (about 0.4 s of CPU, seconds under a small CPU limit), and a worker
 * should run its share before it has anything to acknowledge.
 */
export const loadClient = (() => {
  let loaded: Promise<typeof KubeClient> | undefined;
  return (): Promise<typeof KubeClient> => (loaded ??= import('./kube-client.js'));
})();

/** In a pod: the mounted ServiceAccount token. */
async function inClusterConfig(): Promise<k8s.KubeConfig> {
  const { KubeConfig } = await loadClient();
  const kc = new KubeConfig();
  kc.loadFromDefault();
  return kc;
}

/** An API client made on first use (and once): the client loaded, over `kc` or the in-cluster config. */
export function lazyApi<T>(make: (client: typeof KubeClient, config: k8s.KubeConfig) => T, kc?: k8s.KubeConfig): () => Promise<T> {
  let made: Promise<T> | undefined;
  return () => (made ??= Promise.all([loadClient(), kc ?? inClusterConfig()]).then(([client, config]) => make(client, config)));
}

export function createLeaseApi(kc?: k8s.KubeConfig): LeaseApi {
  const api = lazyApi((client, config) => config.makeApiClient(client.CoordinationV1Api), kc);
  return {
    read: async (namespace, name) =>
      (await api()).readNamespacedLease({ namespace, name }).catch((err: unknown) => {
        if (statusOf(err) === 404) return undefined;
        throw err;
      }),
    create: async (namespace, body) => (await api()).createNamespacedLease({ namespace, body }),
    replace: async (namespace, body) => (await api()).replaceNamespacedLease({ namespace, name: body.metadata?.name ?? '', body }),
  };
}

/** The pod's namespace: POD_NAMESPACE, else the mounted ServiceAccount's. */
export function podNamespace(): string | undefined {
  if (process.env.POD_NAMESPACE) return process.env.POD_NAMESPACE;
  try {
    return readFileSync('/var/run/secrets/kubernetes.io/serviceaccount/namespace', 'utf8').trim();
  } catch {
    return undefined;
  }
}

/**
 * Returns `acknowledge`: resolves once the Lease says `ack` (or a later
 * acknowledgement superseded it); rejects only when a write is refused for good
 * (403, 422: the worker's RBAC or the admission policy) or retries ran out.
 * Calls are serialised; only the latest pending one is written.
 */
export function createAcknowledger(options: AcknowledgerOptions): (ack: Acknowledged) => Promise<void> {
  const statefulSet = options.statefulSet ?? parseWorker(options.pod)?.statefulSet;
  if (!statefulSet) throw new Error(`cannot tell the StatefulSet of pod ${options.pod}; pass statefulSet`);
  const api = options.api ?? createLeaseApi();
  const now = options.now ?? (() => new Date());
  const attempts = options.attempts ?? 8;
  const backoffMs = options.backoffMs ?? 200;
  const target = { pod: options.pod, podUid: options.podUid, namespace: options.namespace, statefulSet };
  const name = leaseName(options.pod);

  let latest: Acknowledged | undefined;
  let chain: Promise<void> = Promise.resolve();

  async function write(ack: Acknowledged): Promise<void> {
    const loadedAt = now().toISOString();
    for (let attempt = 1; ; attempt++) {
      if (latest !== ack) return; // superseded: the newer call writes
      try {
        const current = await api.read(target.namespace, name);
        if (alreadySays(current, target.podUid, ack)) return;
        const body = leaseFor(target, ack, loadedAt, current);
        if (current) await api.replace(target.namespace, body);
        else await api.create(target.namespace, body);
        return;
      } catch (err) {
        if (!transient(statusOf(err)) || attempt >= attempts) throw err;
        await new Promise((r) => setTimeout(r, Math.min(5000, backoffMs * 2 ** (attempt - 1))));
      }
    }
  }

  return (ack) => {
    latest = ack;
    chain = chain.catch(() => {}).then(() => write(ack));
    return chain;
  };
}
