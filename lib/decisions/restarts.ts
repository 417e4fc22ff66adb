// The restart function's decision: which pods to delete now so that every
// worker runs its current share, in handoff order, never with more than
// maxUnavailable of the Swarm's workers out of service. Pure: it sees the
// restart workspace (from the ConfigMap), the pods as they are now and, for
// workers that acknowledge, what each pod says it runs (its Lease).
//
// Handoffs wait on what workers report, not on readiness: a step waiting for a
// worker waits until that worker's own pod acknowledges its current share
// (restarts break first: the loser has stopped the moved jobs before the
// gainer restarts to start them, lib/plan/restart-order.ts).
// Only pods that do not acknowledge fall back to "restarted and Ready".
import type { ValidSwarm } from '../api/types.js';
import type { PodView, PoolShape } from '../kube/types.js';
import { workerNames } from '../assignment/workers.js';
import { FAILOVER_PROTOCOL, jobsDigest, type LeaseLike, type WorkerConfig } from '../workerconfig/index.js';
import { acknowledgementsByWorker, declaresAcknowledgement, judgeAcknowledgement, type ShareAcknowledgement } from './coverage.js';
import { isServing, podsOfPool, podsOfPoolByName } from './workers.js';
import type { RecordedStep, RestartWorkspace } from './workspace.js';

/** Where one step stands, judged from the live pod and what it acknowledges. */
export type StepState =
  | 'pending' // the pod holding the older share is still running it
  | 'deleting' // that pod is being deleted
  | 'done'; // a newer pod (or none yet) serves this worker, or the pod already acknowledges its share

/** What the decisions know of one live worker. */
export interface WorkerFacts {
  pod?: PodView;
  /** What the pod acknowledges against its share; undefined when it does not acknowledge (or no share is known). */
  ack?: ShareAcknowledgement;
  /** Policy Restart: the pod pinned for a restart still lives, so it runs the older share whatever it acknowledges. */
  restartPending?: boolean;
  /** This pod's own acknowledgement announces the failover protocol: it heartbeats and fences itself (workers.ts isExpired). */
  heartbeats?: boolean;
  /** This pod's own acknowledgement says it fenced itself and names no job (FENCED_ANNOTATION): it runs nothing. */
  fenced?: boolean;
}

export interface WorkersObservation {
  /** The pool (a Deployment's view too: its pods are its workers, by name). */
  statefulSet: PoolShape & { replicas: number };
  /** The live workers' count, when not the StatefulSet's replicas (the config's, mid-resize). */
  workers?: number;
  pods: readonly PodView[];
  /** The config in force; without it, steps are judged by pod uid alone. */
  config?: WorkerConfig;
  leases?: readonly LeaseLike[];
  /** Every pod of the pool by name, wherever its ordinal (a handoff's holders: podsOfPoolByName). */
  anyOrdinal?: boolean;
}

const NO_JOBS = jobsDigest([]);

/** The live workers' pods and acknowledgements, one lookup per worker. */
export function workerFacts(obs: WorkersObservation): (worker: string) => WorkerFacts {
  const pods = obs.anyOrdinal ? podsOfPoolByName(obs.statefulSet, obs.pods) : podsOfPool(obs.statefulSet, obs.workers ?? obs.statefulSet.replicas, obs.pods);
  const acks = acknowledgementsByWorker(obs.leases ?? []);
  const config = obs.config;
  // Asked about repeatedly (each wait, each step): judged once per worker (a digest of its share).
  const known = new Map<string, WorkerFacts>();
  const judge = (worker: string): WorkerFacts => {
    const pod = pods.get(worker);
    if (!pod) return {};
    if (!declaresAcknowledgement(pod)) return { pod };
    const own = acks.get(pod.name);
    const mine = own?.podUid === pod.uid && own.protocol === FAILOVER_PROTOCOL;
    const heartbeats = mine ? { heartbeats: true, ...(own.fenced && own.digest === NO_JOBS ? { fenced: true } : {}) } : {};
    if (!config) return { pod, ...heartbeats };
    return { pod, ack: judgeAcknowledgement(pod, config.workloads[worker], acks), ...heartbeats };
  };
  return (worker) => {
    let facts = known.get(worker);
    if (!facts) known.set(worker, (facts = judge(worker)));
    return facts;
  };
}

export function stepState(step: RecordedStep, facts: WorkerFacts): StepState {
  const { pod, ack } = facts;
  if (!pod || pod.uid !== step.staleUid) return 'done';
  // It reloaded the share by itself (a hot reload): nothing left to restart.
  if (ack === 'runs') return 'done';
  return pod.terminating ? 'deleting' : 'pending';
}

/**
 * The worker runs its current share, as far as can be known: its pod serves
 * and acknowledges the share; a pod that does not acknowledge, once its step
 * is done (it was restarted, or never had to be).
 */
export function settled(facts: WorkerFacts, step: RecordedStep | undefined): boolean {
  if (!isServing(facts.pod)) return false;
  if (facts.ack !== undefined) return facts.ack === 'runs';
  return !step || stepState(step, facts) === 'done';
}

export interface RestartObservation extends WorkersObservation {
  swarm: ValidSwarm;
  workspace: RestartWorkspace;
  /** Uids of pods another reconcile recorded it is deleting (restart-intents.ts liveIntents): out of service already. */
  inFlight?: ReadonlySet<string>;
}

export interface RestartDecision {
  /** Pods to delete now, in order; each delete is preconditioned on uid and resourceVersion. */
  deletes: PodView[];
  /** Workers whose restart is still outstanding (pending or deleting). */
  outstanding: string[];
  /** Why nothing more is deleted now, for logs and status; empty when all is done. */
  waiting: string;
}

export function decideRestarts(obs: RestartObservation): RestartDecision {
  const { swarm, statefulSet, workspace } = obs;
  const { policy, maxUnavailable } = swarm.spec.restart;
  const facts = workerFacts(obs);
  const workers = workerNames(statefulSet.name, statefulSet.replicas, statefulSet.startOrdinal);
  const live = new Set(workers);

  // Steps of workers removed by a scale-down are moot.
  const steps = workspace.steps.filter((s) => live.has(s.worker));
  const stepOf = new Map(steps.map((s) => [s.worker, s] as const));
  const state = new Map(steps.map((s) => [s.worker, stepState(s, facts(s.worker))] as const));
  const outstanding = steps.filter((s) => state.get(s.worker) !== 'done').map((s) => s.worker);

  if (policy === 'None') {
    // Hot-reloading workers: nothing to restart (assign records no steps for them).
    return { deletes: [], outstanding: [], waiting: '' };
  }
  // A pod made while the last write was landing may hold an older share and be pinned yet (restart-bookkeeping.ts sealRestarts).
  if (workspace.unsealed?.length) {
    return { deletes: [], outstanding: [...new Set([...outstanding, ...workspace.unsealed.filter((w) => live.has(w))])], waiting: 'assign is listing the pods after its write' };
  }

  // Pods past spec.replicas are departing (the StatefulSet's shrink is under way): they use no budget.
  const kept = workers.slice(0, Math.min(workers.length, swarm.spec.replicas ?? workers.length));
  const inFlight = obs.inFlight ?? new Set<string>();
  const claimed = (pod: PodView | undefined) => !!pod && inFlight.has(pod.uid);
  const unavailable = kept.filter((w) => !isServing(facts(w).pod) || claimed(facts(w).pod)).length;
  let budget = maxUnavailable - unavailable;

  // A worker waited for that the pool does not have (past its replicas, no pod of that name left) runs nothing, and
  // its pod, created only once the pool grows, reads the current share. Waiting for it would wait for the scale-up
  // that waits for these restarts under BreakBeforeMake (lib/decisions/scale.ts).
  const anyPod = podsOfPoolByName(statefulSet, obs.pods);
  const vacant = (w: string) => !live.has(w) && !anyPod.has(w);

  const deletes: PodView[] = [];
  const blocked: string[] = [];
  for (const step of steps) {
    if (state.get(step.worker) !== 'pending') continue;
    // Another reconcile is deleting it (its intent is recorded): counted above, not deleted twice.
    if (claimed(facts(step.worker).pod)) continue;
    const notYet = step.waitFor.filter((w) => !settled(facts(w), stepOf.get(w)) && !vacant(w));
    if (notYet.length) {
      blocked.push(`${step.worker} waits for ${notYet.join(', ')} to acknowledge`);
      continue;
    }
    if (budget <= 0) {
      blocked.push(`${step.worker} waits for maxUnavailable=${maxUnavailable} (${unavailable + deletes.length} unavailable)`);
      continue;
    }
    const pod = facts(step.worker).pod;
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
