// A Swarm's phase and conditions (Ready, Progressing, Degraded), judged from
// the problem that stops it, else from its workers (status-workers.ts): no
// config yet, restarts pending, pods not ready, jobs uncovered, a handoff in
// flight, or converged; a rollout blocked past its deadline is Degraded.
import type { Condition, Phase } from '../api/types.js';
import type { WorkerShare } from '../workerconfig/index.js';
import { boundMessage, summariseWorkers } from './condition-messages.js';
import { stuckRollout } from './rollout-blockers.js';
import type { StatusObservation } from './status-observation.js';
import type { JudgedWorkers } from './status-workers.js';
import { isServing } from './workers.js';

/** Conditions with lastTransitionTime now (status.ts keeps the earlier time of those that did not change). */
export function judgeConditions(obs: StatusObservation, judged: JudgedWorkers): { phase: Phase; conditions: Condition[] } {
  const generation = obs.swarm.metadata.generation;
  const c = (type: string, status: Condition['status'], reason: string, message: string): Condition => ({
    type,
    status,
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    lastTransitionTime: obs.now,
    reason,
    message: boundMessage(message),
  });
  const sts = obs.statefulSet;
  const { replicas, readyReplicas, names, pods, recorded, outstanding, coverage } = judged;

  // A staged handoff in the config (lib/decisions/handoff.ts): who still releases or awaits jobs.
  const marks = (w: WorkerShare) => (w.releasing?.length ?? 0) + (w.awaiting?.length ?? 0) + (w.released?.length ?? 0);
  const marked = Object.entries(obs.config?.workloads ?? {}).filter(([, w]) => marks(w) > 0);
  const handingOver = marked.map(([name]) => name);
  const inFlight = marked.reduce((n, [, w]) => n + marks(w), 0);

  let phase: Phase;
  let conditions: Condition[];
  if (obs.problem) {
    const { reason, message } = obs.problem;
    const waitingForStatefulSet = reason === 'StatefulSetNotFound' || reason === 'DeploymentNotFound';
    phase = waitingForStatefulSet ? 'Pending' : 'Degraded';
    conditions = [
      c('Ready', 'False', reason, message),
      c('Progressing', 'False', reason, message),
      waitingForStatefulSet
        ? c('Degraded', 'False', 'AsExpected', `waiting for the ${reason === 'DeploymentNotFound' ? 'Deployment' : 'StatefulSet'} to exist`)
        : c('Degraded', 'True', reason, message),
    ];
  } else {
    const missing = replicas - readyReplicas;
    const unhonoured = obs.unhonouredDedications ?? 0;
    const degraded = unhonoured > 0
      ? c('Degraded', 'True', 'DedicationsNotHonoured', `${unhonoured} dedicated job(s) share a worker: not enough replicas, or a worker out of service`)
      : c('Degraded', 'False', 'AsExpected', 'every dedicated job has a worker of its own');
    if (!obs.config) {
      // Pods may all be Ready, but until a share is written nobody owns a job.
      phase = 'Pending';
      conditions = [
        c('Ready', 'False', 'AwaitingAssignment', 'no worker config written yet'),
        c('Progressing', 'True', 'Assigning', `assigning ${obs.swarm.spec?.workload?.jobs?.length ?? 0} job(s) over ${replicas} worker(s)`),
        degraded,
      ];
    } else if (outstanding.size > 0) {
      phase = 'Updating';
      const list = summariseWorkers([...outstanding]);
      conditions = [
        c('Ready', 'False', 'RestartsPending', `restarts pending for ${list}`),
        c('Progressing', 'True', 'RestartingWorkers', `restarting ${list} to load version ${obs.config?.version ?? 0}`),
        degraded,
      ];
    } else if (recorded.length > 0) {
      phase = 'Updating';
      const list = summariseWorkers(recorded.map((s) => s.worker));
      conditions = [
        c('Ready', 'False', 'RestartsPending', `restarted ${list}; clearing the restart bookkeeping`),
        c('Progressing', 'True', 'RestartingWorkers', `restarted ${list} for version ${obs.config?.version ?? 0}`),
        degraded,
      ];
    } else if (missing > 0) {
      phase = 'Pending';
      // Which workers, and whether their jobs still have owners (a crash-looping worker's peers hold its share).
      const notReady = names.flatMap((name) => {
        const pod = pods.get(name);
        if (isServing(pod)) return [];
        const why = judged.expired.get(name);
        if (why !== undefined) return [`${name} (expired: ${why}, its jobs handed to peers)`];
        return [pod?.waiting ? `${name} (${pod.waiting.reason})` : name];
      });
      // An expiry is its own reason, so the Event of the Ready condition's change says which worker expired.
      const reason = judged.expired.size > 0 ? 'WorkersExpired' : 'PodsNotReady';
      let owners = '';
      if (coverage) owners = coverage.uncovered.length === 0 ? '; every job runs on an acknowledged worker' : `; ${coverage.uncovered.length} job(s) run by no acknowledged, Ready worker`;
      conditions = [
        c('Ready', 'False', reason, `${readyReplicas}/${replicas} workers ready` + (notReady.length > 0 ? ` (not ready: ${summariseWorkers(notReady)})` : '') + owners),
        c('Progressing', 'True', 'WaitingForPods', `${missing} worker(s) not ready yet`),
        degraded,
      ];
    } else if (coverage && coverage.uncovered.length > 0) {
      // Never Ready while a job has no running owner (0 replicas included).
      phase = 'Updating';
      const n = coverage.uncovered.length;
      const named = summariseWorkers(coverage.uncovered);
      conditions = [
        c('Ready', 'False', 'JobsUncovered', `${n} job(s) run by no acknowledged, Ready worker: ${named}`),
        c('Progressing', 'True', 'AwaitingAcknowledgements', `waiting for workers to acknowledge version ${obs.config?.version ?? 0}`),
        degraded,
      ];
    } else if (handingOver.length > 0) {
      // Every job has a running owner, and some also run on the worker handing them over.
      phase = 'Updating';
      const waiting = summariseWorkers(handingOver);
      conditions = [
        c('Ready', 'True', 'JobsCovered', `every job runs on an acknowledged worker; ${inFlight} job(s) changing hands`),
        c(
          'Progressing',
          'True',
          'HandingOff',
          `${inFlight} job(s) changing hands (${waiting}): each waits for the next stage to be acknowledged; each pod's kubelet is asked to deliver a stage at once (else it arrives at the kubelet's next sync, up to about a minute)`,
        ),
        degraded,
      ];
    } else {
      phase = 'Running';
      const unverified = coverage?.unverified ?? 0;
      conditions = [
        c(
          'Ready',
          'True',
          'Converged',
          `${replicas} workers run version ${obs.config?.version ?? 0}` + (unverified > 0 ? ` (${unverified} job(s) unverified: inferred, not acknowledged)` : ''),
        ),
        c('Progressing', 'False', 'Converged', 'nothing to do'),
        degraded,
      ];
    }
    if (unhonoured > 0) phase = 'Degraded';
    // A rollout (a config in force, not yet converged) blocked past its deadline is Degraded, naming who blocks it.
    if (obs.config && sts && phase !== 'Running') {
      const stuck = stuckRollout(obs, names, pods, outstanding, coverage);
      if (stuck) {
        phase = 'Degraded';
        conditions = conditions.map((cond) =>
          cond.type === 'Progressing' ? c('Progressing', 'False', 'RolloutStuck', stuck) : cond.type === 'Degraded' ? c('Degraded', 'True', 'RolloutStuck', stuck) : cond,
        );
      }
    }
  }
  return { phase, conditions };
}
