// 409 Conflict means someone else wrote first (and a 404 on a write, that the
// object went away): re-read, re-decide, retry. Bounded; when exhausted the
// failure is transient, so the broker retries later.
import { KubeError, classifyFailure } from '../kube/errors.js';
import type { ReconcileEnv } from './env.js';

export async function retryOnConflict<T>(env: ReconcileEnv, what: string, attempt: (n: number) => Promise<T>): Promise<T> {
  const max = env.maxAttempts ?? 5;
  for (let i = 1; ; i++) {
    try {
      return await attempt(i);
    } catch (err) {
      if (!(err instanceof KubeError) || classifyFailure(err).class !== 'conflict') throw err;
      if (i >= max) throw new KubeError('Transient', 503, `${what}: still conflicting after ${max} attempts: ${err.message}`, err.operation);
      env.onConflictRetry?.();
      env.log.debug({ attempt: i, op: err.operation }, 'conflict, re-reading');
    }
  }
}
