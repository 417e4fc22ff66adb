// What a reconciler needs from the world: the API, a clock, a logger and a few
// hooks for metrics. Passed in, so tests drive reconcilers over a stub client.
import type { KubeClient } from '../kube/client.js';
import type { Shortcuts } from './shortcuts.js';

interface ReconcileLog {
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
  debug(obj: object, msg?: string): void;
}

export interface ReconcileEnv {
  kube: KubeClient;
  now(): Date;
  /** [0, 1): the host's randomness (Math.random in production; the simulator's seeded stream). */
  random?(): number;
  /** Reported as the source of Kubernetes Events, e.g. `swarm-assign`. */
  component: string;
  log: ReconcileLog;
  /** Attempts per reconcile when writes meet 409 Conflict (re-read, re-decide, retry). Default 5. */
  maxAttempts?: number;
  onConflictRetry?(): void;
  onConfigMapWrite?(): void;
  onPodRestart?(): void;
  /** Shortcuts switched off (all on when absent: only the simulator and the benchmark switch them). */
  shortcuts?: Partial<Shortcuts>;
}

/** RFC 3339 with second precision, as metav1.Time is serialised. */
export const rfc3339 = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
