// Drain and handover (docs/worker-protocol.md §5.4, W19–W21). Make-before-break on the way out: a pod asked to stop (SIGTERM) keeps running
// its jobs until the config gives it none, which the assign function publishes
// only once the workers taking them over acknowledge them
// (lib/decisions/handoff.ts). In a Deployment every stopped pod leaves (a
// scale-down, a rolling update, a pod deleted by hand: its replacement has
// another name). In a StatefulSet a pod past the StatefulSet's replicas leaves
// (`kubectl scale sts` down); one within them is replaced under its own name
// (a rolling update, a deletion, an eviction) and waits only while the
// ConfigMap says Swarm hands its jobs to its peers first (HANDOVER_ANNOTATION:
// otherwise waiting would only hold its replacement back). The config is read
// from the API while waiting: the kubelet may stop refreshing a terminating
// pod's ConfigMap volume. The pod's terminationGracePeriodSeconds bounds the wait.
import { workerIndex } from '../../../lib/assignment/workers.js';
import { HANDOVER_ANNOTATION, HANDOVER_VALUE } from '../../../lib/workerconfig/handover.js';
import { getOrNone, type KubeClient } from './kube.js';
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

/** The worker ConfigMap as a stopping pod reads it: its config text and whether Swarm hands a stopping worker's jobs over. */
export interface ConfigMapRead {
  /** `key`'s text; undefined when the key is missing. */
  text: string | undefined;
  handover: boolean;
}

/** Reads ConfigMap `name` (undefined when it is gone). */
export function configMapReader(client: KubeClient, namespace: string, name: string, key: string): () => Promise<ConfigMapRead | undefined> {
  interface ConfigMap {
    data?: Record<string, string>;
    metadata?: { annotations?: Record<string, string> };
  }
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/configmaps/${encodeURIComponent(name)}`;
  return async () => {
    const cm = await getOrNone<ConfigMap>(client, path);
    return cm && { text: cm.data?.[key], handover: cm.metadata?.annotations?.[HANDOVER_ANNOTATION] === HANDOVER_VALUE };
  };
}

/** A StatefulSet's ordinals as read now: `start` … `start + replicas - 1`. */
export interface StatefulSetRange {
  start: number;
  replicas: number;
}

/**
 * How a pod told to stop leaves: `leaving` a pool that goes on (a Deployment's
 * pod, a StatefulSet pod past the replicas), `replaced` under its own name (a
 * StatefulSet pod within them), or `ended` (its StatefulSet is gone: nobody takes over).
 */
export type Departure = 'leaving' | 'replaced' | 'ended';

/** A StatefulSet pod's departure, from its name and its StatefulSet's range (undefined: the StatefulSet is gone). */
export function departureOf(statefulSet: string, pod: string, range: StatefulSetRange | undefined): Departure {
  if (!range) return 'ended';
  return workerIndex(statefulSet, pod, range.replicas, range.start) === undefined ? 'leaving' : 'replaced';
}

/** Reads StatefulSet `name`'s range (undefined when it is gone). */
export function statefulSetReader(client: KubeClient, namespace: string, name: string): () => Promise<StatefulSetRange | undefined> {
  interface StatefulSet {
    spec?: { replicas?: number; ordinals?: { start?: number } };
  }
  const path = `/apis/apps/v1/namespaces/${encodeURIComponent(namespace)}/statefulsets/${encodeURIComponent(name)}`;
  return async () => {
    const sts = await getOrNone<StatefulSet>(client, path);
    return sts && { start: sts.spec?.ordinals?.start ?? 0, replicas: sts.spec?.replicas ?? 1 };
  };
}

export interface DrainOptions {
  pod: string;
  read: () => Promise<ConfigMapRead | undefined>;
  parse: (text: string) => WorkloadsView;
  intervalMs?: number;
  /** Each failed read (the wait goes on). */
  onError?: (err: unknown) => void;
  /** Asked each round before the config (a StatefulSet pod; unset: `leaving`, a Deployment's pod). */
  departure?: () => Promise<Departure>;
}

/** A stopping pod waits on this read of the ConfigMap: it still has jobs there, and they are handed over before it stops. */
export function waitsOn(read: ConfigMapRead | undefined, departure: Departure, pod: string, parse: (text: string) => WorkloadsView): boolean {
  if (departure === 'ended' || !holdsJobs(read?.text, pod, parse)) return false;
  return departure === 'leaving' || read!.handover;
}

/**
 * Resolves once the config read from the API gives this pod no jobs, once
 * nobody will take them over (a replaced pod with no handover, a StatefulSet
 * gone), or once it may no longer read (401/403: its ServiceAccount or Role is
 * gone, as when its namespace is deleted).
 */
export async function waitUntilReleased(options: DrainOptions): Promise<void> {
  const interval = options.intervalMs ?? 500;
  for (;;) {
    try {
      const departure = options.departure ? await options.departure() : 'leaving';
      if (departure === 'ended') return;
      if (!waitsOn(await options.read(), departure, options.pod, options.parse)) return;
    } catch (err) {
      options.onError?.(err);
      const code = (err as { code?: unknown }).code;
      if (code === 401 || code === 403) return;
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
