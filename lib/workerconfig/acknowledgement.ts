// The acknowledgement protocol between workers and Swarm (docs/worker-protocol.md):
// each worker keeps one coordination.k8s.io/v1 Lease, named after its pod, saying
// which config version and which jobs (by digest) it has really started. Swarm
// reads them as observations; the worker library writes them. One home for the
// names and the parsing, so both sides agree.

/**
 * The label that marks what belongs to a Swarm: on worker pods and their Leases
 * the StatefulSet's name (the ApiServerSource watches only those carrying it,
 * and a Lease's events reach the Swarm through it), on the worker ConfigMap the
 * Swarm's name.
 */
export const SWARM_LABEL = 'k8slab.info/swarm';
/** Pod label a worker template carries to say its workers acknowledge (value "lease"); without it they are restart-only (lib/api/schema.ts POOL_RULES). */
export const ACKNOWLEDGES_LABEL = 'k8slab.info/acknowledges';
export const ACKNOWLEDGES_VALUE = 'lease';
/** Top-level config.yml version the worker loaded. */
export const VERSION_ANNOTATION = 'k8slab.info/config-version';
/** jobsDigest (digest.ts) of the jobs it runs. */
export const DIGEST_ANNOTATION = 'k8slab.info/jobs-digest';
/** RFC 3339: when it finished starting them. */
export const LOADED_AT_ANNOTATION = 'k8slab.info/loaded-at';

/** The worker protocol the writer implements (docs/worker-protocol.md); absent: protocol 1. */
export const PROTOCOL_ANNOTATION = 'k8slab.info/worker-protocol';
export const WORKER_PROTOCOL = '1';
/**
 * Value "true": the worker fenced itself under BreakBeforeMake and runs nothing until its share names no
 * job (docs/worker-protocol.md W27). Swarm expires it (lib/decisions/workers.ts isExpired) so its share empties.
 */
export const FENCED_ANNOTATION = 'k8slab.info/fenced';

/** The Lease a worker pod writes is named after the pod. */
export const leaseName = (pod: string): string => pod;

/** What a Lease says, when it says it completely. */
export interface Acknowledgement {
  worker: string;
  /** spec.holderIdentity: the uid of the pod that wrote it (a replacement pod's Lease is stale until it writes). */
  podUid: string;
  version: number;
  digest: string;
  loadedAt: string;
  /** The protocol its writer implements (PROTOCOL_ANNOTATION; absent: "1"). */
  protocol: string;
  /** It says it is fenced, waiting for an empty share (FENCED_ANNOTATION). */
  fenced: boolean;
}

/** The parts of a Lease the protocol reads (lib/kube's LeaseView has them). */
export interface LeaseLike {
  name: string;
  holderIdentity?: string;
  annotations: Readonly<Record<string, string>>;
}

export function parseAcknowledgement(lease: LeaseLike): Acknowledgement | undefined {
  const a = lease.annotations;
  const version = Number(a[VERSION_ANNOTATION]);
  const digest = a[DIGEST_ANNOTATION];
  if (!lease.holderIdentity || !Number.isSafeInteger(version) || version < 0 || !digest) return undefined;
  return { worker: lease.name, podUid: lease.holderIdentity, version, digest, loadedAt: a[LOADED_AT_ANNOTATION] ?? '', protocol: a[PROTOCOL_ANNOTATION] ?? WORKER_PROTOCOL, fenced: a[FENCED_ANNOTATION] === 'true' };
}
