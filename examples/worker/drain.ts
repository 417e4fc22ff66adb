// Make-before-break on the way out: a pod asked to stop (SIGTERM) that leaves
// the pool keeps running its jobs until the config gives it none, which the
// assign function publishes only once the workers taking them over acknowledge
// them (lib/decisions/handoff.ts). In a Deployment every stopped pod leaves (a
// scale-down, a rolling update, a pod deleted by hand: its replacement has
// another name). In a StatefulSet only a pod past the StatefulSet's replicas
// leaves (`kubectl scale sts` down); one replaced under its own name (a
// rolling update, a deletion) keeps its share for its replacement, so waiting
// would only hold the replacement back. The config is read from the API while
// waiting: the kubelet may stop refreshing a terminating pod's ConfigMap
// volume. The pod's terminationGracePeriodSeconds bounds the wait.
import type * as k8s from '@kubernetes/client-node';
import { lazyApi } from './acknowledge.js';
import type { WorkloadsView } from './share.js';

/**
 * This pod still has jobs in the config. No config (the ConfigMap or its key
 * is gone: so is the Swarm) gives it none; one that cannot be parsed: assume it does.
 */
export function holdsJobs(text: string | undefined, pod: string, parse: (text: string) => WorkloadsView): boolean {
  if (text === undefined) return false;
  try {
    return (parse(text).workloads[pod]?.jobs.length ?? 0) > 0;
  } catch {
    return true;
  }
}

/** Reads `key` of ConfigMap `name` (undefined when it, or the key, is missing). */
export function configMapReader(namespace: string, name: string, key: string, kc?: k8s.KubeConfig): () => Promise<string | undefined> {
  const api = lazyApi((client, config) => config.makeApiClient(client.CoreV1Api), kc);
  return async () =>
    (await api()).readNamespacedConfigMap({ namespace, name }).then(
      (cm) => cm.data?.[key],
      (err: unknown) => {
        if ((err as { code?: unknown }).code === 404) return undefined;
        throw err;
      },
    );
}

/** A StatefulSet's ordinals as read now: `start` … `start + replicas - 1`. */
export interface StatefulSetRange {
  start: number;
  replicas: number;
}

/**
 * A StatefulSet pod told to stop drains when it leaves a pool that goes on:
 * its ordinal is outside the StatefulSet's range. Within it, it is replaced
 * under its own name; with the StatefulSet gone (undefined), nobody takes over.
 */
export function drainsOnStop(ordinal: number, range: StatefulSetRange | undefined): boolean {
  return !!range && (ordinal < range.start || ordinal >= range.start + range.replicas);
}

/** Reads StatefulSet `name`'s range (undefined when it is gone). */
export function statefulSetReader(namespace: string, name: string, kc?: k8s.KubeConfig): () => Promise<StatefulSetRange | undefined> {
  const api = lazyApi((client, config) => config.makeApiClient(client.AppsV1Api), kc);
  return async () =>
    (await api()).readNamespacedStatefulSet({ namespace, name }).then(
      (sts) => ({ start: sts.spec?.ordinals?.start ?? 0, replicas: sts.spec?.replicas ?? 1 }),
      (err: unknown) => {
        if ((err as { code?: unknown }).code === 404) return undefined;
        throw err;
      },
    );
}

export interface DrainOptions {
  pod: string;
  read: () => Promise<string | undefined>;
  parse: (text: string) => WorkloadsView;
  intervalMs?: number;
  /** Each failed read (the wait goes on). */
  onError?: (err: unknown) => void;
  /**
   * Asked each round before the config (a StatefulSet pod): false once the
   * pod no longer leaves (its StatefulSet grew back over it: its replacement,
   * of the same name, waits for it to stop).
   */
  stillLeaving?: () => Promise<boolean>;
}

/**
 * Resolves once the config read from the API gives this pod no jobs, once the
 * pod no longer leaves (stillLeaving), or once it may no longer read (401/403:
 * its ServiceAccount or Role is gone, as when its namespace is deleted).
 */
export async function waitUntilReleased(options: DrainOptions): Promise<void> {
  const interval = options.intervalMs ?? 500;
  for (;;) {
    let text: string | undefined;
    try {
      if (options.stillLeaving && !(await options.stillLeaving())) return;
      text = await options.read();
      if (!holdsJobs(text, options.pod, options.parse)) return;
    } catch (err) {
      options.onError?.(err);
      const code = (err as { code?: unknown }).code;
      if (code === 401 || code === 403) return;
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
