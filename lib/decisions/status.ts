// Swarm status as a pure function of what the reconciler observed this time.
// Status is an observation, never an input: nothing here reads the old status
// except to keep lastTransitionTime stable for conditions that did not change,
// and the last version published while no config is read (the floor of the
// next version, lib/decisions/configmap.ts).
import { DEFAULTS, LIMITS } from '../api/schema.js';
import type { Condition, Phase, Swarm, SwarmStatus, WorkerStatus } from '../api/types.js';
import { isDeployment, type PodView, type PoolView } from '../kube/types.js';
import type { LeaseLike, WorkerConfig, WorkerShare } from '../workerconfig/index.js';
import { toJob } from '../assignment/jobs.js';
import { computeCoverage, declaresAcknowledgement, type Coverage, type WrittenAt } from './coverage.js';
import { stepState, workerFacts } from './restarts.js';
import { isServing, podsOfPool, poolWorkerNames } from './workers.js';
import type { RestartWorkspace } from './workspace.js';

/** Something that stops the Swarm from converging until a human acts. */
export type ProblemReason =
  | 'InvalidSpec'
  | 'StatefulSetNotFound'
  | 'StatefulSetClaimed'
  | 'DeploymentNotFound'
  | 'DeploymentClaimed'
  | 'ConfigMapConflict'
  | 'ConfigMapTooLarge'
  | 'TooManyWorkers'
  // The API refused a write for good (lib/kube/errors.ts classifyFailure).
  | 'Forbidden'
  | 'InvalidWrite'
  | 'NamespaceNotFound';

/** Reasons reported as Warning Events even where they are not a Degraded condition. */
const WARNING_REASONS = new Set<string>([
  'InvalidSpec',
  'ConfigMapConflict',
  'StatefulSetClaimed',
  'DeploymentClaimed',
  'ConfigMapTooLarge',
  'TooManyWorkers',
  'Forbidden',
  'InvalidWrite',
  'NamespaceNotFound',
]);

/** "a-0, a-1, … and 1,198 more": a condition message must stay far below 32 KiB whatever the replica count. */
function summariseWorkers(names: readonly string[], named: number = LIMITS.workersNamedInMessages): string {
  if (names.length <= named) return names.join(', ');
  return `${names.slice(0, named).join(', ')}, … and ${(names.length - named).toLocaleString('en-US')} more`;
}

/** Cut to LIMITS.conditionMessageMaxLength characters (metav1.Condition caps messages at 32768 bytes). */
export function boundMessage(message: string): string {
  const max = LIMITS.conditionMessageMaxLength;
  return message.length <= max ? message : `${message.slice(0, max - 1)}…`;
}

export interface StatusObservation {
  swarm: Swarm;
  /** RFC 3339, for lastTransitionTime of conditions that change now. */
  now: string;
  problem?: { reason: ProblemReason; message: string };
  /** The pool: a StatefulSet, or a Deployment. */
  statefulSet?: PoolView;
  config?: WorkerConfig;
  /** Workers the config assigns over, when it differs from the StatefulSet's replicas (spec.replicas mid-resize). */
  workers?: number;
  /** A Deployment pool's workers (pod names) as decided for this reconcile (deploymentWorkers). */
  members?: readonly string[];
  workspace?: RestartWorkspace;
  /** Needed only for the workers the restart bookkeeping lists. */
  pods: readonly PodView[];
  /** Dedicated jobs that had to share a worker. */
  unhonouredDedications?: number;
  /** The workers' acknowledgement Leases (lib/decisions/coverage.ts); none read means none written. */
  leases?: readonly LeaseLike[];
  /**
   * When the config version in force was written (the ConfigMap's last-change
   * annotation): what a rollout counts as blocked since, and what non-acknowledging
   * workers' start times are compared with.
   */
  lastChange?: WrittenAt;
}

/** The worker holding a rollout up, why, and since when (observed times only). */
export interface Blocker {
  worker: string;
  why: string;
  /** RFC 3339: the rollout's last observed progress (see rolloutBlockers). */
  since: string;
}

const later = (...times: Array<string | undefined>): string | undefined =>
  times.filter((t): t is string => t !== undefined && !Number.isNaN(Date.parse(t))).sort((a, b) => Date.parse(a) - Date.parse(b)).at(-1);

/** Why a pod does not serve, from what the kubelet and scheduler report. */
function notServing(pod: PodView): string {
  if (pod.terminating) return 'is terminating';
  if (pod.unschedulable !== undefined) return `is Pending: Unschedulable${pod.unschedulable ? `: ${pod.unschedulable}` : ''}`;
  if (pod.waiting) return `is waiting: ${pod.waiting.reason}${pod.waiting.message ? ` (${pod.waiting.message})` : ''}`;
  if (pod.phase === 'Pending') return 'is Pending';
  return 'is not Ready';
}

/**
 * The workers that block a rollout of version `version`, most fundamental
 * first: a worker whose pod does not serve (missing, unschedulable, crashing,
 * not Ready) holds up everything that waits for it; then restarts not done;
 * then workers serving but not (known to be) running their share. Blocked
 * since the rollout's last observed progress, from observed times only: the
 * version's write, or later a worker pod's creation or readiness change (a
 * long rollout that keeps moving, or a pod failing long after it, gets a fresh
 * deadline). Without the write time, only pods out of service whose readiness
 * change is known can be judged.
 */
function rolloutBlockers(input: {
  workers: readonly string[];
  pods: ReadonlyMap<string, PodView>;
  restartPending: ReadonlySet<string>;
  coverage: Coverage | undefined;
  version: number;
  writtenAt: string | undefined;
}): Blocker[] {
  const { writtenAt } = input;
  const pods = input.workers.map((w) => input.pods.get(w)).filter((p): p is PodView => p !== undefined);
  const since = later(writtenAt, ...pods.flatMap((p) => [p.creationTimestamp, p.readinessChangedAt]));
  if (!since) return [];
  const down: Blocker[] = [];
  const restarting: Blocker[] = [];
  const unacknowledged: Blocker[] = [];
  for (const worker of input.workers) {
    const pod = input.pods.get(worker);
    if (!pod) {
      if (writtenAt) down.push({ worker, why: 'has no pod', since });
    } else if (!isServing(pod)) {
      if (writtenAt || pod.readinessChangedAt) down.push({ worker, why: `pod ${notServing(pod)}`, since });
    } else if (!writtenAt) {
      continue;
    } else if (input.restartPending.has(worker)) {
      restarting.push({ worker, why: 'still runs an older share (restart pending)', since });
    } else if (input.coverage?.workers.get(worker)?.state === 'Uncovered') {
      const why = declaresAcknowledgement(pod)
        ? `has not acknowledged its share of version ${input.version}`
        : `started too soon after its share of version ${input.version} was written to be inferred to run it (it does not acknowledge)`;
      unacknowledged.push({ worker, why, since });
    }
  }
  return [...down, ...restarting, ...unacknowledged];
}

export function computeStatus(obs: StatusObservation): SwarmStatus {
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
  // The workers status judges: those the config assigns over (a departing pod
  // mid scale-down is not one, a new one not yet created is).
  const replicas = obs.workers ?? sts?.replicas ?? 0;
  const pods = sts ? podsOfPool(sts, replicas, obs.pods) : new Map<string, PodView>();
  const names = sts ? poolWorkerNames(sts, replicas, obs.members) : [];
  // The StatefulSet's own count when it was read from the API (its controller's
  // view, as `kubectl get sts` shows it); else, or when its pods are not the
  // workers (mid-resize; a Deployment's surge and departing pods), counted over the workers' pods.
  const countedReady = () => names.filter((name) => isServing(pods.get(name))).length;
  const resizing = sts !== undefined && (replicas !== sts.replicas || isDeployment(sts));
  const readyReplicas = Math.min(replicas, (resizing ? undefined : sts?.readyReplicas) ?? countedReady());
  const live = new Set(names);
  // Steps of live workers as the bookkeeping records them. Until `restart` has
  // cleared a finished step, the Swarm is not Running: status never reports
  // convergence that the ConfigMap's own annotation still contradicts.
  const recorded = (obs.workspace?.steps ?? []).filter((s) => live.has(s.worker));
  const facts = sts ? workerFacts({ statefulSet: sts, pods: obs.pods, ...(obs.config ? { config: obs.config } : {}), ...(obs.leases ? { leases: obs.leases } : {}) }) : () => ({});
  const outstanding = new Set(recorded.filter((s) => stepState(s, facts(s.worker)) !== 'done').map((s) => s.worker));
  // Judged only where a share is in force and nothing blocks the Swarm.
  const coverage: Coverage | undefined =
    sts && obs.config && !obs.problem
      ? computeCoverage({
          jobs: (obs.swarm.spec?.workload?.jobs ?? []).map((j, i) => toJob(j, i).name),
          config: obs.config,
          pods,
          leases: obs.leases ?? [],
          restartPending: outstanding,
          ...(obs.lastChange ? { lastChange: obs.lastChange } : {}),
        })
      : undefined;
  const workers: WorkerStatus[] =
    sts && obs.config
      ? names.map((name) => {
          const covered = coverage?.workers.get(name);
          return {
            name,
            jobs: obs.config?.workloads[name]?.jobs.length ?? 0,
            version: obs.config?.workloads[name]?.version ?? 0,
            restartPending: outstanding.has(name),
            ...(covered ? { coverage: covered.state } : {}),
            ...(covered?.runningVersion !== undefined ? { runningVersion: covered.runningVersion } : {}),
          };
        })
      : [];

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
      ? c('Degraded', 'True', 'DedicationsNotHonoured', `${unhonoured} dedicated job(s) share a worker: not enough replicas`)
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
        return [pod?.waiting ? `${name} (${pod.waiting.reason})` : name];
      });
      let owners = '';
      if (coverage) owners = coverage.uncovered.length === 0 ? '; every job runs on an acknowledged worker' : `; ${coverage.uncovered.length} job(s) run by no acknowledged, Ready worker`;
      conditions = [
        c('Ready', 'False', 'PodsNotReady', `${readyReplicas}/${replicas} workers ready` + (notReady.length > 0 ? ` (not ready: ${summariseWorkers(notReady)})` : '') + owners),
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
    workers,
  };
}

/** The RolloutStuck message when the first blocker has been blocked longer than spec.restart.progressDeadlineSeconds, else undefined. */
function stuckRollout(
  obs: StatusObservation,
  workers: readonly string[],
  pods: ReadonlyMap<string, PodView>,
  outstanding: ReadonlySet<string>,
  coverage: Coverage | undefined,
): string | undefined {
  const version = obs.config?.version ?? 0;
  // The time recorded for this version only: an older record says nothing about it.
  const writtenAt = obs.lastChange?.version === version ? obs.lastChange.at : undefined;
  const deadline = obs.swarm.spec?.restart?.progressDeadlineSeconds ?? DEFAULTS.progressDeadlineSeconds;
  const now = Date.parse(obs.now);
  const stuck = rolloutBlockers({ workers, pods, restartPending: outstanding, coverage, version, writtenAt }).filter(
    (b) => now - Date.parse(b.since) > deadline * 1000,
  );
  const [first] = stuck;
  if (!first) return undefined;
  const others = stuck.length > 1 ? ` (${stuck.length - 1} more worker(s) blocked: ${summariseWorkers(stuck.slice(1).map((b) => b.worker))})` : '';
  return `rollout of version ${version} blocked for more than ${deadline}s: ${first.worker} ${first.why}, since ${first.since}${others}`;
}

/** metav1 semantics: lastTransitionTime moves only when a condition's status does. */
function keepTransitionTimes(before: readonly Condition[] | undefined, after: Condition[]): Condition[] {
  return after.map((cond) => {
    const prev = before?.find((p) => p.type === cond.type);
    return prev && prev.status === cond.status ? { ...cond, lastTransitionTime: prev.lastTransitionTime } : cond;
  });
}

export interface ConditionEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Conditions worth an Event; Progressing moves with every restart and would be noise. */
const EVENTFUL = new Set(['Ready', 'Degraded']);

/** Events are sparse: one per Ready/Degraded condition whose status or reason changed. */
export function conditionEvents(before: readonly Condition[] | undefined, after: readonly Condition[]): ConditionEvent[] {
  return after.flatMap((cond) => {
    if (!EVENTFUL.has(cond.type)) return [];
    const prev = before?.find((p) => p.type === cond.type);
    if (prev && prev.status === cond.status && prev.reason === cond.reason) return [];
    // "Not degraded" is news only when it was degraded before.
    if (!prev && cond.type === 'Degraded' && cond.status === 'False') return [];
    const bad = (cond.type === 'Degraded' && cond.status === 'True') || WARNING_REASONS.has(cond.reason);
    return [{ type: bad ? 'Warning' : 'Normal', reason: cond.reason, message: `${cond.type}=${cond.status}: ${cond.message}` }];
  });
}
