// The pods behind the workers (names and ordinals: lib/assignment/workers.ts).
import { workerIndex, workerNames } from '../assignment/workers.js';
import { isDeployment, type PodView, type PoolShape } from '../kube/types.js';

/** Pods of the StatefulSet's current workers (ordinals startOrdinal … startOrdinal+replicas-1), by worker name. */
export function podsByWorker(statefulSet: string, replicas: number, pods: readonly PodView[], startOrdinal = 0): Map<string, PodView> {
  const byName = new Map<string, PodView>();
  for (const pod of pods) {
    if (workerIndex(statefulSet, pod.name, replicas, startOrdinal) === undefined) continue;
    if (!ofPool({ name: statefulSet }, pod)) continue;
    byName.set(pod.name, pod);
  }
  return byName;
}

/** A pod of this Deployment: controlled by one of its ReplicaSets (`<deployment>-<pod-template-hash>`). */
export const ofDeployment = (deployment: string, pod: PodView): boolean =>
  pod.ownerReplicaSet !== undefined && pod.ownerReplicaSet === `${deployment}-${pod.labels['pod-template-hash'] ?? ''}`;

/** A pod of this pool: a StatefulSet's unless another controller owns it, a Deployment's through its ReplicaSet. */
export const ofPool = (pool: PoolShape, pod: PodView): boolean =>
  isDeployment(pool) ? ofDeployment(pool.name, pod) : pod.ownerStatefulSet === undefined || pod.ownerStatefulSet === pool.name;

/**
 * The pool's pods by worker name. A StatefulSet's: its first `count` workers'.
 * A Deployment's: all of its pods, terminating ones included (a departing
 * worker runs its share until the share is handed over), whether or not the
 * config names them yet.
 */
export function podsOfPool(pool: PoolShape, count: number, pods: readonly PodView[]): Map<string, PodView> {
  if (!isDeployment(pool)) return podsByWorker(pool.name, count, pods, pool.startOrdinal);
  return new Map(pods.filter((p) => ofPool(pool, p)).map((p) => [p.name, p] as const));
}

/**
 * Every pod of the pool by name, wherever its ordinal: a pod past the
 * replicas, or outside a moved `ordinals.start`, still runs what the config in
 * force gives it until it stops, so a handoff counts it among the holders.
 */
export function podsOfPoolByName(pool: PoolShape, pods: readonly PodView[]): Map<string, PodView> {
  if (isDeployment(pool)) return podsOfPool(pool, 0, pods);
  const prefix = `${pool.name}-`;
  return new Map(pods.filter((p) => p.name.startsWith(prefix) && ofPool(pool, p)).map((p) => [p.name, p] as const));
}

/** The pool's `count` workers: a StatefulSet's by ordinal, a Deployment's as decided for this reconcile (`members`). */
export function poolWorkerNames(pool: PoolShape, count: number, members: readonly string[] | undefined): string[] {
  if (isDeployment(pool)) return [...(members ?? [])];
  return workerNames(pool.name, count, pool.startOrdinal);
}

/** A worker serves its jobs: its pod exists, is Ready and is not being deleted. */
export const isServing = (pod: PodView | undefined): boolean => !!pod && pod.ready && !pod.terminating;

/** Waiting reasons that say a container will not run soon: the kubelet backs off, or cannot start it at all. */
const STUCK_REASONS = new Set(['CrashLoopBackOff', 'ImagePullBackOff', 'ErrImagePull', 'CreateContainerConfigError', 'CreateContainerError', 'InvalidImageName']);

/**
 * Nothing runs in this pod for a while, though it is not going away: its container crash-loops or cannot
 * start, or no node takes it (lib/decisions/handoff.ts inCustody gives its jobs to serving peers meanwhile).
 */
export const isStuck = (pod: PodView | undefined): boolean => !!pod && !pod.terminating && (STUCK_REASONS.has(pod.waiting?.reason ?? '') || pod.unschedulable !== undefined);

/**
 * Expired (docs/failure-detection.md): a worker that heartbeats (its own
 * Lease announces protocol 2) whose running container lost readiness — it
 * fenced itself (no fresh heartbeat: a partition, a hung job) or stopped
 * answering its probe (frozen). Not a container that has not been Ready yet
 * since it (re)started: its readiness changed before it started, and it runs
 * its share as it reads it. Or one whose acknowledgement says it fenced and
 * runs nothing (`fenced`), Ready or not, this process or a new one: it waits
 * for a share that names no job before it runs any (docs/worker-protocol.md
 * W27). Its jobs go to serving peers (handoff.ts inCustody) until it is
 * Ready again and no longer fenced; under BreakBeforeMake it counts as stopped.
 */
export function isExpired(facts: { pod?: PodView | undefined; heartbeats?: boolean | undefined; fenced?: boolean | undefined }): boolean {
  const pod = facts.pod;
  if (!facts.heartbeats || !pod || pod.terminating) return false;
  if (facts.fenced) return true;
  if (pod.ready || pod.waiting || !pod.startedAt || !pod.readinessChangedAt) return false;
  return pod.readinessChangedAt > pod.startedAt;
}
