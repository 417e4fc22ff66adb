// The restart function's decision: which pods to delete now so that every
// worker runs its current share, in handoff order, never with more than
// maxUnavailable of the Swarm's workers out of service. Pure: it sees the
// restart workspace (from the ConfigMap) and the pods as they are now.
import type { ValidSwarm } from '../api/types.js';
import type { PodView, StatefulSetView } from '../kube/types.js';
import { workerNames } from '../assignment/workers.js';
import { isServing, podsByWorker } from './workers.js';
import type { RecordedStep, RestartWorkspace } from './workspace.js';

/** Where one step stands, judged from the live pod alone. */
export type StepState =
  | 'pending' // the pod holding the older share is still running
  | 'deleting' // that pod is being deleted
  | 'done'; // a newer pod (or none yet) serves this worker

export interface RestartObservation {
  swarm: ValidSwarm;
  statefulSet: StatefulSetView;
  workspace: RestartWorkspace;
  pods: readonly PodView[];
}

export interface RestartDecision {
  /** Pods to delete now, in order; each delete is preconditioned on uid and resourceVersion. */
  deletes: PodView[];
  /** Workers whose restart is still outstanding (pending or deleting). */
  outstanding: string[];
  /** Why nothing more is deleted now, for logs and status; empty when all is done. */
  waiting: string;
}

export function stepState(step: RecordedStep, pod: PodView | undefined): StepState {
  if (!pod || pod.uid !== step.staleUid) return 'done';
  return pod.terminating ? 'deleting' : 'pending';
}

export function decideRestarts(obs: RestartObservation): RestartDecision {
  const { swarm, statefulSet, workspace } = obs;
  const { policy, maxUnavailable } = swarm.spec.restart;
  const pods = podsByWorker(statefulSet.name, statefulSet.replicas, obs.pods, statefulSet.startOrdinal);
  const workers = workerNames(statefulSet.name, statefulSet.replicas, statefulSet.startOrdinal);
  const live = new Set(workers);

  // Steps of workers removed by a scale-down are moot.
  const steps = workspace.steps.filter((s) => live.has(s.worker));
  const state = new Map(steps.map((s) => [s.worker, stepState(s, pods.get(s.worker))] as const));
  const outstanding = steps.filter((s) => state.get(s.worker) !== 'done').map((s) => s.worker);

  if (policy === 'None') {
    // Hot-reloading workers: nothing to restart (assign records no steps for them).
    return { deletes: [], outstanding: [], waiting: '' };
  }

  // Pods past spec.replicas are departing (a shrink waits for these restarts): they use no budget.
  const kept = workers.slice(0, Math.min(workers.length, swarm.spec.replicas ?? workers.length));
  const unavailable = kept.filter((w) => !isServing(pods.get(w))).length;
  let budget = maxUnavailable - unavailable;
  // A worker is settled when its current share is live: its step is done and its pod serves.
  const settled = (w: string) => (state.get(w) ?? 'done') === 'done' && isServing(pods.get(w));

  const deletes: PodView[] = [];
  const blocked: string[] = [];
  for (const step of steps) {
    if (state.get(step.worker) !== 'pending') continue;
    const notYet = step.waitFor.filter((w) => !settled(w));
    if (notYet.length) {
      blocked.push(`${step.worker} waits for ${notYet.join(', ')}`);
      continue;
    }
    if (budget <= 0) {
      blocked.push(`${step.worker} waits for maxUnavailable=${maxUnavailable} (${unavailable + deletes.length} unavailable)`);
      continue;
    }
    const pod = pods.get(step.worker);
    if (pod) {
      deletes.push(pod);
      // Deleting a serving pod takes it out of service; a pod that is not serving already counts.
      if (isServing(pod)) budget -= 1;
    }
  }
  const deleting = outstanding.filter((w) => state.get(w) === 'deleting');
  const waiting = [
    ...(deleting.length ? [`${deleting.join(', ')} restarting`] : []),
    ...blocked,
  ].join('; ');
  return { deletes, outstanding, waiting };
}
