// How an API failure should be treated by a reconciler. `classifyFailure` is
// the one place that decides it; the reconcilers act on the class and the HTTP
// adapter maps what is left onto answers the Knative dispatcher understands.
import { ApiException } from '@kubernetes/client-node';

export type KubeErrorKind =
  | 'NotFound' // 404/410: the object (or its namespace) is not there
  | 'Conflict' // 409: resourceVersion/uid precondition failed, or AlreadyExists
  | 'Invalid' // 400/413/422: the API rejected what we sent
  | 'Forbidden' // 403: RBAC or admission; fixed by an admin, not by retrying
  | 'Transient'; // 401, 429, 5xx, timeouts, connection resets

type KubeVerb = 'GET' | 'LIST' | 'CREATE' | 'UPDATE' | 'PATCH' | 'DELETE';

export class KubeError extends Error {
  constructor(
    readonly kind: KubeErrorKind,
    readonly status: number,
    message: string,
    /** e.g. "PATCH configmaps ns/name" — for logs, spans and condition messages. */
    readonly operation: string,
    /** The request's verb, when known: a 404 on CREATE means the namespace is missing. */
    readonly verb?: KubeVerb,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

function kindOfStatus(status: number): KubeErrorKind {
  if (status === 404 || status === 410) return 'NotFound';
  if (status === 409) return 'Conflict';
  if (status === 400 || status === 413 || status === 422) return 'Invalid';
  if (status === 403) return 'Forbidden';
  // 401: the token may be mid-rotation (projected tokens are re-read); other 4xx
  // are our bugs, not the user's, and stay visible as failures to retry.
  return 'Transient';
}

export const isKubeError = (err: unknown, kind?: KubeErrorKind): err is KubeError =>
  err instanceof KubeError && (kind === undefined || err.kind === kind);

/** A failure no retry fixes until someone changes RBAC, the namespace or what we send. */
export type PermanentReason = 'Forbidden' | 'InvalidWrite' | 'NamespaceNotFound';

export type FailureClass =
  /** 5xx, 429, timeouts, resets, unknown errors: answer 503, the broker retries with backoff. */
  | { class: 'transient' }
  /** Someone else wrote first (or the object vanished under a write): re-read, re-decide, bounded. */
  | { class: 'conflict' }
  /** Record it on the Swarm (condition + Warning Event) and answer 2xx; a later resync recovers. */
  | { class: 'permanent'; reason: PermanentReason };

/** The one classification of API failures (a table, unit-tested as one). */
export function classifyFailure(err: unknown): FailureClass {
  if (!(err instanceof KubeError)) return { class: 'transient' };
  switch (err.kind) {
    case 'Conflict':
      return { class: 'conflict' };
    case 'NotFound':
      // A create can only miss its namespace; an update or delete missed an object
      // that vanished after we read it, which a fresh observation sorts out.
      return err.verb === 'CREATE' ? { class: 'permanent', reason: 'NamespaceNotFound' } : { class: 'conflict' };
    case 'Forbidden':
      return { class: 'permanent', reason: 'Forbidden' };
    case 'Invalid':
      return { class: 'permanent', reason: 'InvalidWrite' };
    case 'Transient':
      return { class: 'transient' };
  }
}

/** One API request, as errors, deadlines and instrumentation name it. */
export interface KubeCall {
  verb: KubeVerb;
  resource: string;
  namespace: string;
  name?: string;
}

/** "GET configmaps ns/name", "LIST pods in ns": how a call is named in errors, logs and spans. */
export const describe = (c: KubeCall) => `${c.verb} ${c.resource}${c.name ? ` ${c.namespace}/${c.name}` : ` in ${c.namespace}`}`;

/** Any thrown value → KubeError; unknown failures (resets, DNS, TLS) are transient. */
export function toKubeError(err: unknown, c: KubeCall): KubeError {
  if (err instanceof KubeError) return err;
  if (err instanceof ApiException) {
    const status = err.code;
    return new KubeError(kindOfStatus(status), status, `${describe(c)}: ${status} ${statusMessage(err.body)}`, describe(c), c.verb);
  }
  const message = err instanceof Error ? err.message : String(err);
  return new KubeError('Transient', 503, `${describe(c)}: ${message}`, describe(c), c.verb);
}

function statusMessage(body: unknown): string {
  if (typeof body === 'string') {
    try {
      return statusMessage(JSON.parse(body));
    } catch {
      return body.slice(0, 300);
    }
  }
  if (body && typeof body === 'object' && 'message' in body) return String((body as { message: unknown }).message);
  return '';
}
