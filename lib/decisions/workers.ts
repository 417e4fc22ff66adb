// The pods behind the workers (names and ordinals: lib/assignment/workers.ts).
import { workerIndex } from '../assignment/workers.js';
import type { PodView } from '../kube/types.js';

/** Pods of the StatefulSet's current workers (ordinals startOrdinal … startOrdinal+replicas-1), by worker name. */
export function podsByWorker(statefulSet: string, replicas: number, pods: readonly PodView[], startOrdinal = 0): Map<string, PodView> {
  const byName = new Map<string, PodView>();
  for (const pod of pods) {
    if (workerIndex(statefulSet, pod.name, replicas, startOrdinal) === undefined) continue;
    if (pod.ownerStatefulSet !== undefined && pod.ownerStatefulSet !== statefulSet) continue;
    byName.set(pod.name, pod);
  }
  return byName;
}

/** A worker serves its jobs: its pod exists, is Ready and is not being deleted. */
export const isServing = (pod: PodView | undefined): boolean => !!pod && pod.ready && !pod.terminating;
