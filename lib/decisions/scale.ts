// Swarm-owned worker count (spec.replicas): how many workers the config
// assigns over, and when to resize the StatefulSet (through its scale
// subresource), so that no job waits for a pod that has not read its share
// and no pod leaves before its jobs have a running owner. Pure: plain data in,
// decision out. Without spec.replicas the StatefulSet's own count is followed,
// as before (a direct `kubectl scale sts`, the weaker path).
//
//  - Scale-up: the config over the target count is written first, then the
//    StatefulSet grows, so every new pod starts with its share already there.
//    BreakBeforeMake also lets the losers stop (their restarts done) first.
//  - Scale-down, MakeBeforeBreak: the config over the target count is written
//    while the departing pods still run their old shares; the StatefulSet
//    shrinks only once the survivors cover every job of the new config.
//  - Scale-down, BreakBeforeMake: the StatefulSet shrinks first; the config
//    keeps the departing workers until their pods are gone, then hands off.
//  - Before the StatefulSet exists: its workers are known from the Swarm
//    alone, so the first config is written for them, and its pods start with
//    their shares already there (awaitedStatefulSet).
import { poolOf, type Handoff, type ValidSwarm } from '../api/types.js';
import { toJob } from '../assignment/jobs.js';
import { ordinalOf, workerIndex } from '../assignment/workers.js';
import type { JobSpec } from '../assignment/types.js';
import { isDeployment, type PodView, type PoolShape, type StatefulSetView } from '../kube/types.js';
import type { LeaseLike, WorkerConfig } from '../workerconfig/index.js';
import { computeCoverage } from './coverage.js';
import { stepState, workerFacts } from './restarts.js';
import { podsOfPool } from './workers.js';
import type { RestartWorkspace } from './workspace.js';

/**
 * The StatefulSet a Swarm that owns its count is waiting for, as the Swarm
 * declares it: `spec.replicas` workers from ordinal 0 (a StatefulSet that
 * starts elsewhere renames them once it exists). Only for a first config (none
 * written yet): one in force stays as it is until its pods can be observed.
 * Undefined for a Swarm that follows its pool's count, or whose pool is a
 * Deployment (its workers' names are its pods', unknown before they exist).
 */
export function awaitedStatefulSet(swarm: ValidSwarm, namespace: string, hasConfig: boolean): StatefulSetView | undefined {
  const pool = poolOf(swarm.spec);
  if (hasConfig || pool.kind !== 'StatefulSet' || swarm.spec.replicas === undefined) return undefined;
  return { kind: 'StatefulSet', name: pool.name, namespace, uid: '', replicas: swarm.spec.replicas, labelSelector: '' };
}

export interface WorkerCountInput {
  /** spec.replicas; undefined: follow the StatefulSet. */
  desired: number | undefined;
  handoff: Handoff;
  statefulSet: Pick<StatefulSetView, 'name' | 'replicas' | 'startOrdinal'>;
  /** Workers of the config in force (undefined: none written yet). */
  configWorkers: number | undefined;
  pods: readonly PodView[];
}

/** How many workers the config assigns over now (from the StatefulSet's start ordinal). */
export function workerCount(input: WorkerCountInput): number {
  const { desired, statefulSet } = input;
  if (desired === undefined) return statefulSet.replicas;
  if (input.handoff === 'BreakBeforeMake' && input.configWorkers !== undefined && input.configWorkers > desired) {
    // Departing workers keep their share until their pods are gone: nobody takes over a job still running.
    if (statefulSet.replicas > desired || departingPods(statefulSet, desired, input.pods).length > 0) return input.configWorkers;
  }
  return desired;
}

/** Pods of this StatefulSet beyond its first `count` workers (still running, or terminating). */
function departingPods(statefulSet: Pick<StatefulSetView, 'name' | 'startOrdinal'>, count: number, pods: readonly PodView[]): PodView[] {
  const end = (statefulSet.startOrdinal ?? 0) + count;
  return pods.filter((p) => {
    if (p.ownerStatefulSet !== undefined && p.ownerStatefulSet !== statefulSet.name) return false;
    const ordinal = ordinalOf(statefulSet.name, p.name);
    return ordinal !== undefined && ordinal >= end;
  });
}

interface ScaleInput {
  desired: number | undefined;
  handoff: Handoff;
  /** The pool (a Deployment's view too). */
  statefulSet: PoolShape & { replicas: number };
  /** The spec's jobs: every one must be covered before a MakeBeforeBreak shrink. */
  jobs: readonly JobSpec[];
  /** The config in force after this reconcile's write. */
  config: WorkerConfig;
  /** The restart bookkeeping in force after this reconcile's write. */
  workspace: RestartWorkspace;
  pods: readonly PodView[];
  leases: readonly LeaseLike[];
}

export type ScaleDecision =
  | { kind: 'none'; /** Why a resize waits; empty when none is due. */ waiting: string }
  | { kind: 'scale'; from: number; to: number; reason: string };

export function decideScale(input: ScaleInput): ScaleDecision {
  const { desired, statefulSet, config } = input;
  const current = statefulSet.replicas;
  if (desired === undefined || desired === current) return { kind: 'none', waiting: '' };
  // A Deployment's new pods are named only once they exist, and it picks which
  // pods leave: it is resized at once, and its workers follow its pods
  // (deploymentWorkers): a new pod gets a share once it exists, a departing one
  // hands its share over while it terminates (the reference worker waits for that).
  if (isDeployment(statefulSet)) return { kind: 'scale', from: current, to: desired, reason: 'a Deployment pool follows its pods' };
  if (desired < current && input.handoff === 'BreakBeforeMake') {
    return { kind: 'scale', from: current, to: desired, reason: 'BreakBeforeMake: the departing workers stop before anyone takes over' };
  }
  const assigned = Object.keys(config.workloads).length;
  if (assigned !== desired) {
    return { kind: 'none', waiting: `config assigns over ${assigned} worker(s), not yet ${desired}` };
  }
  const outstanding = outstandingRestarts(input, assigned);

  if (desired > current) {
    // Pods the StatefulSet makes before the pods are listed after the write could not be told from ones made before it landed.
    if (input.workspace.unsealed?.length) return { kind: 'none', waiting: `growing to ${desired} once the pods are listed after the config write` };
    if (input.handoff === 'BreakBeforeMake' && outstanding.size > 0) {
      return { kind: 'none', waiting: `growing to ${desired} after ${[...outstanding].join(', ')} restarted (BreakBeforeMake)` };
    }
    return { kind: 'scale', from: current, to: desired, reason: `the config over ${desired} workers is written` };
  }

  // With no workers left nobody can cover anything: shrinking is what was asked for.
  if (desired === 0) return { kind: 'scale', from: current, to: desired, reason: 'scaled to zero' };
  const coverage = computeCoverage({
    jobs: input.jobs.map((j, i) => toJob(j, i).name),
    config,
    pods: podsOfPool(statefulSet, assigned, input.pods),
    leases: input.leases,
    restartPending: outstanding,
  });
  if (coverage.uncovered.length > 0) {
    return { kind: 'none', waiting: `shrinking to ${desired} once the survivors cover ${coverage.uncovered.length} more job(s)` };
  }
  return { kind: 'scale', from: current, to: desired, reason: `the ${desired} surviving workers cover every job` };
}

/** Workers among the first `count` whose recorded restart is not done yet. */
function outstandingRestarts(input: Pick<ScaleInput, 'statefulSet' | 'workspace' | 'pods' | 'config' | 'leases'>, count: number): Set<string> {
  const { statefulSet } = input;
  const facts = workerFacts({ statefulSet, workers: count, pods: input.pods, config: input.config, leases: input.leases });
  return new Set(
    input.workspace.steps
      .filter((s) => workerIndex(statefulSet.name, s.worker, count, statefulSet.startOrdinal) !== undefined)
      .filter((s) => stepState(s, facts(s.worker)) !== 'done')
      .map((s) => s.worker),
  );
}
