// The workers a Swarm's status judges, and what it reports of each: those the
// config assigns over (a departing pod mid scale-down is not one, a new one not
// yet created is), how many serve, which restarts are still outstanding, and
// which jobs have a running owner (coverage.ts).
import type { WorkerStatus } from '../api/types.js';
import { toJob } from '../assignment/jobs.js';
import { isDeployment, type PodView } from '../kube/types.js';
import { computeCoverage, type Coverage } from './coverage.js';
import { stepState, workerFacts, type WorkerFacts } from './restarts.js';
import type { StatusObservation } from './status-observation.js';
import { isExpired, isServing, podsOfPool, poolWorkerNames } from './workers.js';
import type { RecordedStep } from './workspace.js';

export interface JudgedWorkers {
  /** How many workers the config assigns over (spec.replicas mid-resize, else the pool's replicas). */
  replicas: number;
  readyReplicas: number;
  /** The workers' names, in order. */
  names: string[];
  /** Each worker's pod, by worker name. */
  pods: Map<string, PodView>;
  /** Steps of live workers as the restart bookkeeping records them. */
  recorded: RecordedStep[];
  /** The workers whose recorded restart is not done yet. */
  outstanding: Set<string>;
  /** Judged only where a share is in force and nothing blocks the Swarm. */
  coverage?: Coverage;
  /** status.workers. */
  rows: WorkerStatus[];
  /** Workers that expired (workers.ts isExpired), by name: why ("fenced", or NotReady since when, RFC 3339). */
  expired: Map<string, string>;
}

export function judgeWorkers(obs: StatusObservation): JudgedWorkers {
  const sts = obs.statefulSet;
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
  // Every step judged by its pinned pod wherever its ordinal: a pod outside a range read a moment apart from the
  // one `pods` uses (a StatefulSet read before a resize landed) is not a finished step (the simulator's seed 1013).
  const facts = sts ? workerFacts({ statefulSet: sts, pods: obs.pods, ...(obs.config ? { config: obs.config } : {}), ...(obs.leases ? { leases: obs.leases } : {}), anyOrdinal: true }) : (): WorkerFacts => ({});
  const outstanding = new Set(recorded.filter((s) => stepState(s, facts(s.worker)) !== 'done').map((s) => s.worker));
  // A worker whose pods were not yet listed after the write that changed its share may hold the older one.
  for (const worker of obs.workspace?.unsealed ?? []) if (live.has(worker)) outstanding.add(worker);
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
  const rows: WorkerStatus[] =
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
  const why = (f: WorkerFacts) => (f.fenced ? 'fenced' : `NotReady since ${f.pod?.readinessChangedAt ?? ''}`);
  const expired = new Map(names.flatMap((name) => (isExpired(facts(name)) ? [[name, why(facts(name))] as const] : [])));
  return { replicas, readyReplicas, names, pods, recorded, outstanding, ...(coverage ? { coverage } : {}), rows, expired };
}
