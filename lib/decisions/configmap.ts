// The assign function's decision: the desired worker ConfigMap for a Swarm,
// built from the spec, the worker count (spec.replicas, else the StatefulSet's
// replicas: lib/decisions/scale.ts), the StatefulSet's start ordinal and the
// ConfigMap as it is now (its current assignment is the sticky input of the
// assigner, and its annotations are the restart workspace). Pure: observations
// in, decision out. The write it asks for is checked here too: who owns the
// ConfigMap (configmap-ownership.ts), what to send (configmap-patch.ts), and
// whether the API server would take it (configmap-size.ts).
import { LIMITS } from '../api/schema.js';
import type { ValidSwarm } from '../api/types.js';
import { assign } from '../assignment/index.js';
import type { Assignment, UnhonouredDedication } from '../assignment/types.js';
import { isDeployment, type ConfigMapPatch, type ConfigMapView, type DeploymentView, type PodView, type PoolView } from '../kube/types.js';
import { diff, type Move } from '../plan/index.js';
import {
  FAILOVER_KEY,
  HANDOVER_ANNOTATION,
  HANDOVER_VALUE,
  SWARM_LABEL,
  assignmentOf,
  nextConfig,
  render,
  renderFailover,
  type HandoffMarks,
  type LeaseLike,
  type WorkerConfig,
} from '../workerconfig/index.js';
import { deploymentWorkers, inheritShares, type DeploymentWorkers } from '../assignment/workers.js';
import { readConfig, type ConfigReader } from './config-read.js';
import { foreignController, ownerReferenceTo, withOwner } from './configmap-ownership.js';
import { configMapPatch } from './configmap-patch.js';
import { sizeProblem } from './configmap-size.js';
import { SPEC_GENERATION_ANNOTATION, specGenerationOf, specReadIsOlder } from './spec-generation.js';
import { jsonEqual } from './equal.js';
import { inCustody, sharedInCustody, stageHandoff } from './handoff.js';
import { nextRestarts, sealRestarts } from './restart-bookkeeping.js';
import { stepState, workerFacts, type WorkerFacts } from './restarts.js';
import { workerCount } from './scale.js';
import { podsOfPool, podsOfPoolByName, poolWorkerNames } from './workers.js';
import { LABEL_MANAGED_BY, MANAGED_BY, readRestarts, withLastChange, withRestarts } from './workspace.js';

export interface AssignObservation {
  /** Validated, defaults applied. */
  swarm: ValidSwarm;
  /** The pool: a StatefulSet, or a Deployment (its workers: deploymentWorkers). */
  statefulSet: PoolView;
  configMap: ConfigMapView | undefined;
  pods: readonly PodView[];
  /** The workers' acknowledgement Leases: a pod that acknowledges another share than its own is restarted. */
  leases?: readonly LeaseLike[];
  /** RFC 3339, recorded with a new config version as the time it was written. */
  now?: string;
}

export type BlockedReason = 'ConfigMapConflict' | 'ConfigMapTooLarge' | 'TooManyWorkers';

type AssignDecision =
  | { kind: 'blocked'; reason: BlockedReason; message: string }
  /** The Swarm read is older than the spec the config in force was decided from: re-read (spec-generation.ts). */
  | { kind: 'stale'; message: string }
  | {
      kind: 'converge';
      /** What to do with the API: nothing when the observed ConfigMap already is the desired one. */
      write: 'create' | 'update' | 'none';
      /** The ConfigMap as it should be (foreign labels, annotations, data and owners kept). */
      configMap: ConfigMapView;
      /** For an update: only the fields Swarm changes, guarded by the resourceVersion read. */
      patch?: ConfigMapPatch;
      config: WorkerConfig;
      /** How many workers the config assigns over (from the StatefulSet's start ordinal). */
      workers: number;
      /** A Deployment pool's workers (pod names) for this reconcile. */
      members?: string[];
      /** The assignment changed (the config version was bumped). */
      changed: boolean;
      changedWorkers: string[];
      moves: Move[];
      unhonoured: readonly UnhonouredDedication[];
      /** Set when the config found in the ConfigMap could not be parsed (it is replaced). */
      malformedPrevious?: string;
    };

export function decideConfigMap(obs: AssignObservation, read: ConfigReader = readConfig): AssignDecision {
  const { swarm, statefulSet, configMap } = obs;
  const spec = swarm.spec;
  const key = spec.configKey;

  if (configMap) {
    const other = foreignController(configMap, swarm);
    if (other) {
      return {
        kind: 'blocked',
        reason: 'ConfigMapConflict',
        message: `ConfigMap ${configMap.name} is controlled by ${other.kind} ${other.name} (uid ${other.uid}), not by this Swarm`,
      };
    }
    if (specReadIsOlder(configMap.annotations, swarm)) {
      return { kind: 'stale', message: `ConfigMap ${configMap.name} was written from a newer spec than generation ${swarm.metadata.generation ?? '?'}` };
    }
  }

  const { previous, malformed, rendered, assignment } = read(configMap?.data[key]);
  const pool = isDeployment(statefulSet) ? deploymentPool(previous, statefulSet, spec.replicas, obs.pods) : undefined;
  const workers = pool ? pool.workers.length : workerCount({
    desired: spec.replicas,
    handoff: spec.restart.handoff,
    statefulSet,
    configWorkers: previous ? Object.keys(previous.workloads).length : undefined,
    pods: obs.pods,
  });
  if (workers > LIMITS.maxWorkers) {
    return {
      kind: 'blocked',
      reason: 'TooManyWorkers',
      message: `${isDeployment(statefulSet) ? 'Deployment' : 'StatefulSet'} ${statefulSet.name} has ${count(workers)} replicas; a Swarm manages at most ${count(LIMITS.maxWorkers)}`,
    };
  }

  // The last version published, as status recorded it: a ConfigMap deleted or
  // garbled by hand cannot take versions backwards, and its workers are restarted.
  const floor = swarm.status?.version ?? 0;
  const lost = previous === undefined ? floor > 0 : previous.version < floor;
  const previousAssignment = previous ? (assignment?.() ?? assignmentOf(previous)) : undefined;
  // A Deployment's new pod takes its predecessor's share as it stands: the assigner keeps it in place.
  const sticky = previousAssignment && pool ? inheritShares(previousAssignment, pool.successors) : previousAssignment;
  const result = assign({
    statefulSetName: statefulSet.name,
    replicas: workers,
    ...(statefulSet.startOrdinal ? { startOrdinal: statefulSet.startOrdinal } : {}),
    ...(pool ? { workers: pool.workers } : {}),
    jobs: spec.workload.jobs,
    ...(sticky ? { previous: sticky } : {}),
  });
  const leases = obs.leases ? { leases: obs.leases } : {};
  // Hot-reloading workers hand jobs over through the config itself (handoff.ts),
  // judged by what each pod acknowledges of the config in force. Every pod the
  // config in force gives jobs may still run them: a StatefulSet shrunk by hand
  // (`kubectl scale sts`) still has its departing pods until they stop.
  const holders = Math.max(statefulSet.replicas, previous ? Object.keys(previous.workloads).length : 0);
  // Every live pod of the pool is a holder, wherever its ordinal (workers.ts podsOfPoolByName).
  const facts0 = workerFacts({ statefulSet, workers: holders, pods: obs.pods, ...(previous ? { config: previous } : {}), ...leases, anyOrdinal: true });
  // A worker restarted to load (policy Restart) still runs its older share while its pinned pod lives.
  const inForce = readRestarts(configMap?.annotations ?? {});
  // Pinned anew from pods listed after the write that recorded it (observe lists them again while unsealed).
  const recorded = sealRestarts(inForce, (worker) => facts0(worker).pod);
  const held =
    spec.restart.policy === 'None'
      ? facts0
      : (worker: string): WorkerFacts => {
          const f = facts0(worker);
          const step = recorded.steps.find((st) => st.worker === worker);
          return step && stepState(step, f) !== 'done' ? { ...f, restartPending: true } : f;
        };
  // A StatefulSet pod replaced under its own name, or any stuck or expired worker, has its jobs run by its
  // peers meanwhile (handoff.ts inCustody); breaking first, only an expired one (it fenced itself), hot-reloading.
  const dedicated = dedicatedJobs(spec.workload.jobs);
  const breaksFirst = spec.restart.handoff === 'BreakBeforeMake';
  // A departing pod that still serves is the custodian of last resort when it reloads its share (policy None).
  const departing = !pool && spec.restart.policy === 'None' ? [...podsOfPoolByName(statefulSet, obs.pods).keys()].filter((w) => !(w in result.assignment)) : [];
  const custody =
    !breaksFirst || spec.restart.policy === 'None'
      ? inCustody(result.assignment, previous, held, { replacesUnderOwnName: !pool, breaksFirst, departing }, dedicated)
      : undefined;
  const target = custody?.target ?? result.assignment;
  // Status speaks of the shares written: a dedicated job a custodian runs beside others is not honoured either.
  const unhonoured = target === result.assignment ? result.unhonouredDedications : [...result.unhonouredDedications, ...sharedInCustody(target, dedicated, result.unhonouredDedications)];
  // The config in force lost (deleted or garbled by hand) under break-before-make: what each pod runs is
  // unknown, so nobody gains a job until every live pod acknowledges a share of none (recoverBreakingFirst).
  const staged =
    lost && spec.restart.handoff === 'BreakBeforeMake'
      ? recoverBreakingFirst(target, [...podsOfPoolByName(statefulSet, obs.pods).keys()])
      : stageHandoff({ handoff: spec.restart.handoff, previous, target, facts: held });
  const config = nextConfig(previous, staged.jobs, { marks: staged.marks, floor });
  const changed = config !== previous;
  // What moved, only when something did (a no-op reconcile skips the diff).
  const plan = changed ? diff(previousAssignment ?? {}, target) : undefined;
  // A handoff's later stage publishes no new owner: the last change stays the one that moved jobs.
  const moved = plan && (plan.moves.length > 0 || plan.addedWorkers.length > 0 || plan.removedWorkers.length > 0);

  let annotations = { ...(configMap?.annotations ?? {}) };
  // Read by a StatefulSet's stopping workers only: a Deployment's hands over to its successor whatever this says.
  if (custody?.handover && !pool && !breaksFirst) annotations[HANDOVER_ANNOTATION] = HANDOVER_VALUE;
  else delete annotations[HANDOVER_ANNOTATION];
  // Judged against the shares being written: what each live pod acknowledges. A departing pod too (anyOrdinal):
  // one that cannot acknowledge runs what it read at its start, so a share changed under it is pinned to it like
  // any other (restart leaves it alone while it departs, and restarts it if a scale-up brings it back).
  const facts = workerFacts({ statefulSet, workers, pods: obs.pods, config, ...leases, anyOrdinal: true });
  // The previous config lost: what any pod loaded is unknown, so every live pod is restarted.
  // Restart-only workers load what is published to them only by restarting: a worker
  // whose published jobs changed (a staged job added, say) is restarted like a changed one.
  const republished =
    plan && previous && spec.restart.policy === 'Restart'
      ? Object.keys(config.workloads).filter((w) => !sameJobs(previous.workloads[w]?.jobs, config.workloads[w]?.jobs))
      : [];
  const unknown = plan ? [...new Set([...(lost ? poolWorkerNames(statefulSet, workers, pool?.workers) : []), ...republished])] : [];
  // Restart bookkeeping, only for workers that are restarted to reload. Finished
  // steps are forgotten here, in assign's own guarded write (restart never
  // writes the ConfigMap), so status is judged from live bookkeeping only.
  const restarts = nextRestarts({ restart: spec.restart, recorded, plan, now: { statefulSet, workers, facts }, config, unknown });
  if (plan || inForce.unsealed || !jsonEqual(restarts.steps, inForce.steps)) annotations = withRestarts(annotations, restarts);
  if (moved) annotations = withLastChange(annotations, { version: config.version, moves: plan.moves, ...(obs.now ? { at: obs.now } : {}) });

  const desired: ConfigMapView = {
    name: spec.configMapName,
    namespace: swarm.metadata.namespace,
    ...(configMap?.uid ? { uid: configMap.uid } : {}),
    ...(configMap?.resourceVersion ? { resourceVersion: configMap.resourceVersion } : {}),
    labels: { ...(configMap?.labels ?? {}), [SWARM_LABEL]: swarm.metadata.name, [LABEL_MANAGED_BY]: MANAGED_BY },
    annotations,
    ownerReferences: withOwner(configMap?.ownerReferences ?? [], ownerReferenceTo(swarm)),
    data: withFailover({ ...(configMap?.data ?? {}), [key]: config === previous && rendered ? rendered() : render(config) }, spec),
    ...(configMap?.binaryData ? { binaryData: configMap.binaryData } : {}),
  };

  // The spec it was decided from, recorded with any write (alone, it is no reason to write).
  const generation = specGenerationOf(swarm);
  if (generation && (!configMap || configMapPatch(configMap, desired))) desired.annotations = { ...desired.annotations, [SPEC_GENERATION_ANNOTATION]: generation };
  const patch = configMap ? configMapPatch(configMap, desired) : undefined;
  const write = !configMap ? 'create' : patch ? 'update' : 'none';
  if (write !== 'none') {
    // Refuse before sending: the API server would answer 422 and nothing would change.
    const tooLarge = sizeProblem(desired, key);
    if (tooLarge) return { kind: 'blocked', reason: 'ConfigMapTooLarge', message: tooLarge };
  }
  return {
    kind: 'converge',
    write,
    configMap: desired,
    ...(patch ? { patch } : {}),
    config,
    workers,
    ...(pool ? { members: pool.workers } : {}),
    changed,
    changedWorkers: plan ? [...plan.changedWorkers] : [],
    moves: plan ? plan.moves.map((m) => ({ job: m.job, from: m.from, to: m.to })) : [],
    unhonoured,
    ...(malformed ? { malformedPrevious: malformed } : {}),
  };
}

/** failover.yml beside the config while spec.failover is set (docs/failure-detection.md); gone once it is not. */
function withFailover(data: Record<string, string>, spec: ValidSwarm['spec']): Record<string, string> {
  const { [FAILOVER_KEY]: _old, ...rest } = data;
  return spec.failover ? { ...rest, [FAILOVER_KEY]: renderFailover({ leaseSeconds: spec.failover.leaseSeconds, handoff: spec.restart.handoff }) } : rest;
}

const dedicatedJobs = (jobs: ValidSwarm['spec']['workload']['jobs']): Set<string> =>
  new Set(jobs.flatMap((j) => (typeof j === 'object' && j.dedicated ? [j.name] : [])));

const sameJobs = (a: readonly string[] | undefined, b: readonly string[] | undefined): boolean =>
  (a ?? []).length === (b ?? []).length && (a ?? []).every((j, i) => j === (b ?? [])[i]);

/**
 * Break-before-make when the config in force is lost: every job awaits its
 * owner, published to nobody; the staging then adds each job once every live
 * pod acknowledges its empty share (handoff.ts breakBeforeMake, `awaiting`).
 * A live pod outside the target (a departing one: a StatefulSet shrunk, whose
 * config kept it until its pod was gone) is listed too, with none: the staging
 * counts only the workers the config in force lists, and that pod may still
 * run any job.
 */
function recoverBreakingFirst(target: Assignment, livePods: readonly string[]): { jobs: Assignment; marks: HandoffMarks } {
  const jobs: Record<string, string[]> = {};
  const marks: Record<string, { awaiting: string[] }> = {};
  for (const [worker, owns] of Object.entries(target)) {
    jobs[worker] = [];
    if (owns.length > 0) marks[worker] = { awaiting: [...owns] };
  }
  for (const worker of livePods) jobs[worker] ??= [];
  return { jobs, marks };
}

/**
 * A Deployment pool's workers now: spec.replicas (else the Deployment's own)
 * places, filled from the config's workers and the Deployment's pods. A worker
 * all of whose published jobs are `releasing` is departing, not one of them.
 */
function deploymentPool(previous: WorkerConfig | undefined, deployment: DeploymentView, desired: number | undefined, pods: readonly PodView[]): DeploymentWorkers {
  const departing = (share: WorkerConfig['workloads'][string]) => share.jobs.length > 0 && (share.releasing?.length ?? 0) === share.jobs.length;
  const before = Object.entries(previous?.workloads ?? {}).filter(([, share]) => !departing(share)).map(([name]) => name);
  // Its controller has not yet created (nor given up creating) every pod it wants.
  const creating = (deployment.observedReplicas ?? deployment.replicas) < deployment.replicas && deployment.replicaFailure === undefined;
  return deploymentWorkers(before, [...podsOfPool(deployment, 0, pods).values()], desired ?? deployment.replicas, creating);
}

const count = (n: number): string => n.toLocaleString('en-US');
