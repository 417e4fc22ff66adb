// Make-before-break on the way out, for pools whose pods are replaced rather
// than restarted (a Deployment): a pod asked to stop (SIGTERM: a scale-down, a
// rolling update, a pod deleted by hand) keeps running its jobs until the
// config gives it none, which the assign function publishes only once the
// workers taking them over acknowledge them (lib/decisions/handoff.ts). The
// config is read from the API while waiting: the kubelet may stop refreshing
// a terminating pod's ConfigMap volume. The pod's terminationGracePeriodSeconds
// bounds the wait.
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

export interface DrainOptions {
  pod: string;
  read: () => Promise<string | undefined>;
  parse: (text: string) => WorkloadsView;
  intervalMs?: number;
  /** Each failed read (the wait goes on). */
  onError?: (err: unknown) => void;
}

/** Resolves once the config read from the API gives this pod no jobs. */
export async function waitUntilReleased(options: DrainOptions): Promise<void> {
  const interval = options.intervalMs ?? 500;
  for (;;) {
    let text: string | undefined;
    try {
      text = await options.read();
      if (!holdsJobs(text, options.pod, options.parse)) return;
    } catch (err) {
      options.onError?.(err);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
