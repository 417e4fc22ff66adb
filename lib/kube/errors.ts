// How an API failure should be treated by a reconciler. The HTTP adapter maps
// these onto answers the Knative dispatcher understands: transient → 5xx
// (retried), conflict → re-read and retry in-process, gone → 2xx no-op.

export type KubeErrorKind =
  | 'NotFound' // 404: the object is gone
  | 'Conflict' // 409: resourceVersion/uid precondition failed, or AlreadyExists
  | 'Invalid' // 400/422: the API rejected what we sent
  | 'Forbidden' // 401/403: RBAC; not fixed by retrying quickly, but fixed by an admin
  | 'Transient'; // 429, 5xx, timeouts, connection resets

export class KubeError extends Error {
  constructor(
    readonly kind: KubeErrorKind,
    readonly status: number,
    message: string,
    /** e.g. "PATCH configmaps" — for logs and spans. */
    readonly operation: string,
  ) {
    super(message);
    this.name = 'KubeError';
  }
}

export function kindOfStatus(status: number): KubeErrorKind {
  if (status === 404 || status === 410) return 'NotFound';
  if (status === 409) return 'Conflict';
  if (status === 400 || status === 422) return 'Invalid';
  if (status === 401 || status === 403) return 'Forbidden';
  return 'Transient';
}

export const isKubeError = (err: unknown, kind?: KubeErrorKind): err is KubeError =>
  err instanceof KubeError && (kind === undefined || err.kind === kind);
