// The acknowledgement (docs/worker-protocol.md §4): after a worker has really
// started its jobs it says so in a coordination.k8s.io/v1 Lease named after its
// pod, so Swarm observes — rather than infers — which version each worker runs.
// Written only when what it runs changes (no heartbeat in protocol 1), guarded
// by resourceVersion, transient failures retried with backoff.
import {
  DIGEST_ANNOTATION,
  FENCED_ANNOTATION,
  LOADED_AT_ANNOTATION,
  PROTOCOL_ANNOTATION,
  SWARM_LABEL,
  VERSION_ANNOTATION,
  WORKER_PROTOCOL,
  jobsDigest,
  leaseName,
} from '../../../lib/workerconfig/index.js';
import { parseWorker } from '../../../lib/assignment/workers.js';
import { getOrNone, type KubeClient } from './kube.js';

export interface Acknowledged {
  /** The top-level config.yml version the worker applied. */
  version: number;
  /** The jobs it runs (started, and whose start returned). */
  jobs: readonly string[];
  /** The protocol it implements (default 1; 2 while it heartbeats: heartbeat.ts). */
  protocol?: string;
  /** Fenced, waiting for a share that names no job (FENCED_ANNOTATION, W27); dropped when it resumes. */
  fenced?: boolean;
}

/** The parts of a coordination.k8s.io/v1 Lease the protocol touches. */
export interface Lease {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    namespace?: string;
    resourceVersion?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
  };
  spec?: { holderIdentity?: string; renewTime?: string; acquireTime?: string; leaseDurationSeconds?: number };
}

/** The three calls the acknowledger needs; leaseApi gives them over a KubeClient, tests give a fake. */
export interface LeaseApi {
  /** undefined when there is none (404). */
  read(namespace: string, name: string): Promise<Lease | undefined>;
  create(namespace: string, lease: Lease): Promise<Lease>;
  /** Refused with 409 unless lease.metadata.resourceVersion is current. */
  replace(namespace: string, lease: Lease): Promise<Lease>;
}

export function leaseApi(client: KubeClient): LeaseApi {
  const base = (namespace: string) => `/apis/coordination.k8s.io/v1/namespaces/${encodeURIComponent(namespace)}/leases`;
  return {
    read: (namespace, name) => getOrNone<Lease>(client, `${base(namespace)}/${encodeURIComponent(name)}`),
    create: (namespace, lease) => client.request<Lease>('POST', base(namespace), lease),
    replace: (namespace, lease) => client.request<Lease>('PUT', `${base(namespace)}/${encodeURIComponent(lease.metadata?.name ?? '')}`, lease),
  };
}

export interface AcknowledgerOptions {
  pod: string;
  podUid: string;
  namespace: string;
  /** The pool the pod belongs to (the Lease's label); default: parsed from a StatefulSet pod's name. */
  statefulSet?: string;
  api: LeaseApi;
  now?: () => Date;
  /** Attempts per acknowledgement (default 8) and the first backoff (default 200 ms, doubling, at most 5 s). */
  attempts?: number;
  backoffMs?: number;
}

/** The Lease this worker keeps, as it should read after acknowledging `ack` (pure). Fields it does not own are kept. */
export function leaseFor(options: { pod: string; podUid: string; namespace: string; statefulSet: string }, ack: Acknowledged, loadedAt: string, current?: Lease): Lease {
  const { [FENCED_ANNOTATION]: _wasFenced, ...kept } = current?.metadata?.annotations ?? {};
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      ...(current?.metadata ?? {}),
      name: leaseName(options.pod),
      namespace: options.namespace,
      labels: { ...(current?.metadata?.labels ?? {}), [SWARM_LABEL]: options.statefulSet },
      annotations: {
        ...kept,
        [VERSION_ANNOTATION]: String(ack.version),
        [DIGEST_ANNOTATION]: jobsDigest(ack.jobs),
        [LOADED_AT_ANNOTATION]: loadedAt,
        [PROTOCOL_ANNOTATION]: ack.protocol ?? WORKER_PROTOCOL,
        ...(ack.fenced ? { [FENCED_ANNOTATION]: 'true' } : {}),
      },
    },
    spec: { ...(current?.spec ?? {}), holderIdentity: options.podUid },
  };
}

/**
 * The Lease already says this, written by this process (loaded at or after `since`, its start): a write would
 * change nothing. One an earlier run of the pod wrote is written again: Swarm voids an acknowledgement loaded
 * before the pod's containers last started.
 */
export function alreadySays(lease: Lease | undefined, podUid: string, ack: Acknowledged, since = 0): boolean {
  const a = lease?.metadata?.annotations ?? {};
  return (
    lease?.spec?.holderIdentity === podUid &&
    Date.parse(a[LOADED_AT_ANNOTATION] ?? '') >= since &&
    a[VERSION_ANNOTATION] === String(ack.version) &&
    a[DIGEST_ANNOTATION] === jobsDigest(ack.jobs) &&
    a[PROTOCOL_ANNOTATION] === (ack.protocol ?? WORKER_PROTOCOL) &&
    (a[FENCED_ANNOTATION] === 'true') === !!ack.fenced
  );
}

const statusOf = (err: unknown): number | undefined => {
  const code = (err as { code?: unknown; statusCode?: unknown })?.code ?? (err as { statusCode?: unknown })?.statusCode;
  return typeof code === 'number' ? code : undefined;
};
/** Worth another try: conflicts (re-read), throttling, server errors, and no answer at all. */
const transient = (status: number | undefined): boolean => status === undefined || status === 409 || status === 429 || status >= 500;

/** The pool of a pod: SWARM_POOL's value when given, else a StatefulSet pod's name less its ordinal. */
export function poolOf(pod: string, given?: string): string | undefined {
  return given || parseWorker(pod)?.statefulSet;
}

/**
 * Returns `acknowledge`: resolves once the Lease says `ack` (or a later
 * acknowledgement superseded it); rejects only when a write is refused for good
 * (403, 422: the worker's RBAC or the admission policy) or retries ran out.
 * Calls are serialised; only the latest pending one is written.
 */
export function createAcknowledger(options: AcknowledgerOptions): (ack: Acknowledged) => Promise<void> {
  const statefulSet = poolOf(options.pod, options.statefulSet);
  if (!statefulSet) throw new Error(`cannot tell the pool of pod ${options.pod}; set SWARM_POOL`);
  const { api } = options;
  const now = options.now ?? (() => new Date());
  const since = now().getTime();
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
        if (alreadySays(current, target.podUid, ack, since)) return;
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
