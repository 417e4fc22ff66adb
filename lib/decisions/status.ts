// Swarm status as a pure function of what the reconciler observed this time
// (status-observation.ts): its workers (status-workers.ts), its phase and
// conditions (status-conditions.ts).
// Status is an observation, never an input: nothing here reads the old status
// except to keep lastTransitionTime stable for conditions that did not change,
// and the last version published while no config is read (the floor of the
// next version, lib/decisions/configmap.ts).
import type { Condition, SwarmStatus } from '../api/types.js';
import { judgeConditions } from './status-conditions.js';
import type { StatusObservation } from './status-observation.js';
import { judgeWorkers } from './status-workers.js';

export function computeStatus(obs: StatusObservation): SwarmStatus {
  const generation = obs.swarm.metadata.generation;
  const sts = obs.statefulSet;
  const judged = judgeWorkers(obs);
  const { replicas, readyReplicas, coverage } = judged;
  const { phase, conditions } = judgeConditions(obs, judged);

  return {
    ...(generation !== undefined ? { observedGeneration: generation } : {}),
    phase,
    // The pods that exist (the scale subresource's status.replicas), not the target.
    replicas: sts?.observedReplicas ?? replicas,
    readyReplicas,
    ...(sts?.labelSelector ? { selector: sts.labelSelector } : {}),
    // The last version published survives a lost ConfigMap here: it is the floor of the next (lib/decisions/configmap.ts).
    version: obs.config?.version ?? obs.swarm.status?.version ?? 0,
    ...(coverage ? { uncoveredJobs: coverage.uncovered.length, unverifiedJobs: coverage.unverified } : {}),
    conditions: keepTransitionTimes(obs.swarm.status?.conditions, conditions),
    workers: judged.rows,
  };
}

/** metav1 semantics: lastTransitionTime moves only when a condition's status does. */
function keepTransitionTimes(before: readonly Condition[] | undefined, after: Condition[]): Condition[] {
  return after.map((cond) => {
    const prev = before?.find((p) => p.type === cond.type);
    return prev && prev.status === cond.status ? { ...cond, lastTransitionTime: prev.lastTransitionTime } : cond;
  });
}
