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
import { declaresAcknowledgement, labelsDeclareAcknowledgement } from './coverage.js';
import { stepState, type WorkerFacts } from './restarts.js';
import { isServing, poolWorkerNames } from './workers.js';
import type { RecordedStep, RestartWorkspace } from './workspace.js';

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
  /** Workers whose pods' loaded share is unknown (the previous config was lost). */
  unknown: readonly string[];
}): RestartWorkspace {
  const { recorded, plan, now, config } = input;
  if (input.restart.policy !== 'Restart') return { version: config.version, steps: [] };
  if (plan) return restartWorkspace(recorded, plan, now, config.version, input.unknown);
  return { version: recorded.version, steps: withUnacknowledged(pendingSteps(recorded.steps, now.facts), now) };
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
    // No pod when listed: one made later reads the new share, unless made before this write landed (the seal).
    return pod ? [{ worker: s.worker, staleUid: pod.uid, waitFor: s.waitFor.filter(exists) }] : [];
  });
  // A pod that acknowledges says what it read (withUnacknowledged pins one that read an older share): only a pool
  // whose pods may not is sealed — its template, or a pod listed from an older one, lacks the label.
  const touched = [...new Set([...restarting, ...plan.addedWorkers])].sort();
  const template = now.statefulSet.templateLabels;
  const sealed = labelsDeclareAcknowledgement(template) && touched.every((w) => labelsDeclareAcknowledgement(now.facts(w).pod?.labels ?? template));
  return { version, steps: withUnacknowledged(steps, now), ...(touched.length && !sealed ? { unsealed: touched } : {}) };
}

/**
 * The recorded steps once the pods are listed after the write that recorded
 * them landed (observe lists them again while it is unsealed): a live pod of an
 * unsealed worker other than the one pinned was made between the list that
 * write was decided from and its landing, so it may have mounted the older
 * config (the simulator's seeds 6598, 1164: a rolling restart's pods, and one
 * replacing a pod that was terminating when listed, started on no share and
 * were taken for done). It is pinned in turn, keeping the waits of the step it
 * replaces; a pod made after this list reads the new share. A terminating one
 * runs nothing once gone, and departs like any other; one that acknowledges
 * says what it read.
 */
export function sealRestarts(recorded: RestartWorkspace, podOf: (worker: string) => PodView | undefined): RestartWorkspace {
  if (!recorded.unsealed) return recorded;
  const steps = new Map(recorded.steps.map((s) => [s.worker, s] as const));
  for (const worker of recorded.unsealed) {
    const pod = podOf(worker);
    const step = steps.get(worker);
    // One that acknowledges is judged by what it says (withUnacknowledged), as in a pool that is not sealed.
    if (!pod || pod.terminating || step?.staleUid === pod.uid || declaresAcknowledgement(pod)) continue;
    steps.set(worker, { worker, staleUid: pod.uid, waitFor: step?.waitFor ?? [] });
  }
  return { version: recorded.version, steps: [...steps.values()] };
}

/** Steps whose pod still holds an older share: the pinned pod is live and does not acknowledge its share yet. */
function pendingSteps(steps: readonly RecordedStep[], facts: (worker: string) => WorkerFacts): RecordedStep[] {
  return steps.filter((s) => stepState(s, facts(s.worker)) !== 'done');
}

/**
 * Adds a step for every live pod that acknowledges a share other than its own
 * and has none: a pod that started before its share was written (a new worker,
 * one that predates the first assignment, one created while the config was
 * being written) runs what it read then, observed rather than assumed.
 */
function withUnacknowledged(steps: readonly RecordedStep[], now: WorkersNow): RecordedStep[] {
  const stepped = new Set(steps.map((s) => s.worker));
  const extra = poolWorkerNames(now.statefulSet, now.workers, undefined).flatMap((worker) => {
    const { pod, ack } = now.facts(worker);
    if (stepped.has(worker) || !pod || pod.terminating || ack !== 'differs') return [];
    return [{ worker, staleUid: pod.uid, waitFor: [] }];
  });
  return [...steps, ...extra];
}
