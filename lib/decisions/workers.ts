// Worker identity: the pods of StatefulSet `sts` are `sts-0 … sts-(n-1)`.
import type { PodView } from '../kube/types.js';

export const workerName = (statefulSet: string, ordinal: number): string => `${statefulSet}-${ordinal}`;

/** The ordinal of a pod of this StatefulSet, or undefined when the name is not one of its pods. */
export function ordinalOf(statefulSet: string, podName: string): number | undefined {
  const prefix = `${statefulSet}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const rest = podName.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

export const workerNames = (statefulSet: string, replicas: number): string[] =>
  Array.from({ length: replicas }, (_, i) => workerName(statefulSet, i));

/** Pods of the StatefulSet's current workers (ordinal < replicas), by worker name. */
export function podsByWorker(statefulSet: string, replicas: number, pods: readonly PodView[]): Map<string, PodView> {
  const byName = new Map<string, PodView>();
  for (const pod of pods) {
    const ordinal = ordinalOf(statefulSet, pod.name);
    if (ordinal === undefined || ordinal >= replicas) continue;
    if (pod.ownerStatefulSet !== undefined && pod.ownerStatefulSet !== statefulSet) continue;
    byName.set(pod.name, pod);
  }
  return byName;
}

/** A worker serves its jobs: its pod exists, is Ready and is not being deleted. */
export const isServing = (pod: PodView | undefined): boolean => !!pod && pod.ready && !pod.terminating;
