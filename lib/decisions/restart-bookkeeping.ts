// The restart bookkeeping assign writes with a config (the ConfigMap's
// k8slab.info/restarts annotation, workspace.ts), only for workers restarted
// to reload (policy Restart): after a change, a step per worker whose share
// changed, pinned to the pod holding the older share, in handoff order; at any
// time, the recorded steps still pending, and a step for every pod that runs
// another share than its own. `restart` takes the steps (restarts.ts).
import type { ValidSwarm } from '../api/types.js';
import { workerIndex } from '../assignment/workers.js';
import type { PodView, PoolView } from '../kube/types.js';
import { restartOrder, type AssignmentDiff } from '../plan/index.js';
import type { WorkerConfig } from '../workerconfig/index.js';
import { unverifiable, type WrittenAt } from './coverage.js';
import { stepState, type WorkerFacts } from './restarts.js';
import { isServing, poolWorkerNames } from './workers.js';
import { readLastChange, type RecordedStep, type RestartWorkspace } from './workspace.js';

type RestartSpec = ValidSwarm['spec']['restart'];

export interface WorkersNow {
  statefulSet: PoolView;
  /** How many workers the config assigns over (spec.replicas mid-resize; else the StatefulSet's replicas). */
  workers: number;
  facts: (worker: string) => WorkerFacts;
}

/**
 * The bookkeeping to write with `config`: none unless workers restart to reload;
 * after a change (`plan`), its steps; otherwise the recorded ones still pending,
 * and pods found running another share than their own.
 */
export function nextRestarts(input: {
  restart: Pick<RestartSpec, 'policy' | 'handoff'>;
  /** As the ConfigMap records it now. */
  recorded: RestartWorkspace;
  /** What the change moves; absent: no change. */
  plan: AssignmentDiff | undefined;
  now: WorkersNow;
  config: WorkerConfig;
  /** The ConfigMap's annotations, for when the config in force was written. */
  annotations: Record<string, string>;
  /** Workers whose pods' loaded share is unknown (the previous config was lost). */
  unknown: readonly string[];
}): RestartWorkspace {
  const { recorded, plan, now, config } = input;
  if (input.restart.policy !== 'Restart') return { version: config.version, steps: [] };
  if (plan) return restartWorkspace(recorded, plan, now, config.version, input.unknown);
  return { version: recorded.version, steps: withUnacknowledged(pendingSteps(recorded.steps, now.facts), now, unverifiableIn(config, readLastChange(input.annotations))) };
}

/**
 * Pending restarts after a change: the workers whose share changed now, each
 * pinned to the uid of the pod that holds the older share, plus earlier steps
 * whose pod still holds an older share, which keep the waits they had (a newer
 * version never lets a gainer restart before its loser), plus pods that
 * acknowledge a share other than their own. Restarts break first
 * (lib/plan/restart-order.ts).
 */
function restartWorkspace(
  previous: RestartWorkspace,
  plan: AssignmentDiff,
  now: WorkersNow,
  version: number,
  /** Workers whose pods' loaded share is unknown (the previous config was lost): restarted like changed ones. */
  unknown: readonly string[] = [],
): RestartWorkspace {
  const { name: sts, startOrdinal } = now.statefulSet;
  // Waits name workers of this config only: one removed since (a scale-down) is gone.
  const exists = (w: string) => workerIndex(sts, w, now.workers, startOrdinal) !== undefined;
  const carried = new Map(pendingSteps(previous.steps, now.facts).map((s) => [s.worker, s.waitFor.filter(exists)] as const));
  // A worker new to the config whose pod already serves and acknowledges
  // started before its share existed (it predates the first assignment, or the
  // StatefulSet made it before this write): it runs an older config, like a
  // changed worker, until it says otherwise (a hot reload settles the step).
  // So is one that cannot acknowledge once its container runs: what it read cannot be observed
  // (a pod whose container has not started yet reads the share being written).
  const predating = plan.addedWorkers.filter((w) => {
    const { pod, ack } = now.facts(w);
    if (!pod || pod.terminating) return false;
    return ack === undefined ? pod.startedAt !== undefined : isServing(pod) && ack !== 'runs';
  });
  const restarting = new Set([...plan.changedWorkers, ...predating, ...unknown]);
  const change = { ...plan, changedWorkers: [...restarting] };
  const steps = restartOrder(change, undefined, carried).flatMap((s) => {
    const pod = now.facts(s.worker).pod;
    // No pod: the StatefulSet will create one, and it will read the new share.
    return pod ? [{ worker: s.worker, staleUid: pod.uid, waitFor: s.waitFor.filter(exists) }] : [];
  });
  return { version, steps: withUnacknowledged(steps, now) };
}

/** Steps whose pod still holds an older share: the pinned pod is live and does not acknowledge its share yet. */
function pendingSteps(steps: readonly RecordedStep[], facts: (worker: string) => WorkerFacts): RecordedStep[] {
  return steps.filter((s) => stepState(s, facts(s.worker)) !== 'done');
}

/**
 * Adds a step for every live pod that acknowledges a share other than its own
 * and has none: a pod that started before its share was written (a new worker,
 * one that predates the first assignment, one created while the config was
 * being written) runs what it read then, observed rather than assumed. So too,
 * with `unverifiable`, a serving pod that cannot acknowledge and whose share
 * no start time vouches for (coverage.ts unverifiable): else it stays
 * Uncovered for good.
 */
function withUnacknowledged(steps: readonly RecordedStep[], now: WorkersNow, unverifiable?: (worker: string, pod: PodView) => boolean): RecordedStep[] {
  const stepped = new Set(steps.map((s) => s.worker));
  const extra = poolWorkerNames(now.statefulSet, now.workers, undefined).flatMap((worker) => {
    const { pod, ack } = now.facts(worker);
    if (stepped.has(worker) || !pod || pod.terminating) return [];
    if (ack !== 'differs' && !(pod.ready && unverifiable?.(worker, pod))) return [];
    return [{ worker, staleUid: pod.uid, waitFor: [] }];
  });
  return [...steps, ...extra];
}

/** The workers of `config` whose pods coverage.ts can judge neither by acknowledgement nor by start time. */
const unverifiableIn =
  (config: WorkerConfig, lastChange: WrittenAt | undefined) =>
  (worker: string, pod: PodView): boolean => {
    const share = config.workloads[worker];
    return share !== undefined && unverifiable(worker, pod, share.version, lastChange);
  };
