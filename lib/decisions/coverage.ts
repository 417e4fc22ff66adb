// Which jobs have a running owner, observed rather than inferred: a worker
// covers its share only when its pod is Ready and its own Lease (written by
// this pod's uid) acknowledges a config version at least as new as the share
// and the digest of exactly the share's jobs. One that still acknowledges the
// share it had before the last change (rebuilt from that change's moves) runs
// those jobs: they are covered while it waits for its restart. Workers whose
// pods do not declare that they acknowledge (no `k8slab.info/acknowledges:
// lease` label) fall back to an inference — Ready, and no restart pending
// (every pod that may hold an older share is pinned for one) — reported as
// unverified.
import type { PodView } from '../kube/types.js';
import type { Move } from '../plan/index.js';
import {
  ACKNOWLEDGES_LABEL,
  ACKNOWLEDGES_VALUE,
  jobsDigest,
  parseAcknowledgement,
  type Acknowledgement,
  type LeaseLike,
  type WorkerConfig,
  type WorkerShare,
} from '../workerconfig/index.js';

export type WorkerCoverageState = 'Acknowledged' | 'Inferred' | 'Uncovered';

export interface WorkerCoverage {
  state: WorkerCoverageState;
  /** The config version this pod acknowledged, whether or not it matches its share. */
  runningVersion?: number;
}

/** When the current config version was written (the last-change annotation, lib/decisions/workspace.ts). */
export interface WrittenAt {
  version: number;
  /** RFC 3339; absent in annotations written before the time was recorded. */
  at?: string;
  /** That write's moves, when all were recorded: the shares before it can be rebuilt (shareBefore). */
  moves?: readonly Move[];
}

export interface CoverageInput {
  /** Every job the Swarm asks for (spec order). */
  jobs: readonly string[];
  config: WorkerConfig;
  /** The live workers' pods by worker name (podsByWorker). */
  pods: ReadonlyMap<string, PodView>;
  leases: readonly LeaseLike[];
  /** Workers with a restart still outstanding (for the inference only). */
  restartPending: ReadonlySet<string>;
  /** The current version's write (its moves rebuild a share before it: shareBefore). */
  lastChange?: WrittenAt;
}

export interface Coverage {
  /** Jobs no Ready worker is known (or, unverified, inferred) to run, in spec order. */
  uncovered: string[];
  /** Jobs covered by inference only. */
  unverified: number;
  workers: Map<string, WorkerCoverage>;
}

/** Labels (a pod's, or its pool's template) that declare the pod acknowledges what it runs. */
export function labelsDeclareAcknowledgement(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[ACKNOWLEDGES_LABEL] === ACKNOWLEDGES_VALUE;
}

export function declaresAcknowledgement(pod: PodView): boolean {
  return labelsDeclareAcknowledgement(pod.labels);
}

/** The workers' acknowledgements by worker name, each Lease parsed once. */
export function acknowledgementsByWorker(leases: readonly LeaseLike[]): Map<string, Acknowledgement> {
  const acks = new Map<string, Acknowledgement>();
  for (const lease of leases) {
    const ack = parseAcknowledgement(lease);
    if (ack) acks.set(ack.worker, ack);
  }
  return acks;
}

/**
 * What a pod's own acknowledgement says against the share it should run:
 * `runs` — a version at least the share's and the digest of exactly its jobs;
 * `differs` — this pod acknowledged something else (an older share, or none);
 * `covers` — it runs its share and the jobs it just released (`released`:
 * it has not reloaded its smaller share yet), so its share is covered;
 * `none` — this pod has not acknowledged anything (a Lease left by an earlier
 * pod of the same name does not count: its holder is another uid).
 */
export type ShareAcknowledgement = 'runs' | 'covers' | 'differs' | 'none';

const NO_SHARE: WorkerShare = { jobs: [], version: 0 };

export function judgeAcknowledgement(
  pod: PodView,
  share: WorkerShare | undefined,
  acks: ReadonlyMap<string, Acknowledgement>,
): ShareAcknowledgement {
  const ack = acks.get(pod.name);
  if (!ack || ack.podUid !== pod.uid) return 'none';
  // Loaded before every container of the pod started (again): an earlier run's word (a crash, a liveness
  // restart), and the process running now has said nothing yet (the simulator's seed 742: Ready credited on it).
  // The earliest start, so a sidecar restarted alone never voids the worker's word.
  const restarted = pod.restartedAllAt ?? pod.startedAt;
  if (restarted && ack.loadedAt && Date.parse(ack.loadedAt) < Date.parse(restarted)) return 'none';
  const { jobs, version, released } = share ?? NO_SHARE;
  if (ack.version >= version && ack.digest === jobsDigest(jobs)) return 'runs';
  return released?.length && ack.digest === jobsDigest([...jobs, ...released]) ? 'covers' : 'differs';
}

/**
 * The jobs `worker` held before the last change, when that change gave it the
 * share it has now (`share`) and every move of it was recorded: its share less
 * what it gained, plus what it gave up. Undefined otherwise: an older share
 * cannot be rebuilt, and nobody is credited for it.
 */
function shareBefore(worker: string, share: WorkerShare, lastChange: WrittenAt | undefined): string[] | undefined {
  if (!lastChange?.moves || share.version !== lastChange.version) return undefined;
  const gained = new Set(lastChange.moves.filter((m) => m.to === worker).map((m) => m.job));
  const lost = lastChange.moves.filter((m) => m.from === worker).map((m) => m.job);
  return [...share.jobs.filter((job) => !gained.has(job)), ...lost];
}

export function computeCoverage(input: CoverageInput): Coverage {
  const workers = new Map<string, WorkerCoverage>();
  const acknowledged = new Set<string>();
  const inferred = new Set<string>();
  const acks = acknowledgementsByWorker(input.leases);
  for (const [worker, share] of Object.entries(input.config.workloads)) {
    const pod = input.pods.get(worker);
    const serving = pod !== undefined && pod.ready && !pod.terminating;
    if (!pod) {
      workers.set(worker, { state: 'Uncovered' });
      continue;
    }
    if (declaresAcknowledgement(pod)) {
      const ack = acks.get(worker);
      const own = ack && ack.podUid === pod.uid ? ack : undefined;
      const said = judgeAcknowledgement(pod, share, acks);
      let runs = serving && (said === 'runs' || said === 'covers');
      if (runs) for (const job of share.jobs) acknowledged.add(job);
      else if (serving && said === 'differs' && own && own.version < share.version && input.restartPending.has(worker)) {
        // Not restarted yet (its restart is due: a worker that loads only by restarting): it still runs
        // what it had before the last change. The moves only say which list to check; its digest is what
        // vouches for it. A worker that reloads by itself may already have stopped them: never credited so.
        const before = shareBefore(worker, share, input.lastChange);
        if (before && own.digest === jobsDigest(before)) {
          for (const job of before) acknowledged.add(job);
          const held = new Set(before);
          runs = share.jobs.every((job) => held.has(job));
        }
      }
      workers.set(worker, { state: runs ? 'Acknowledged' : 'Uncovered', ...(own ? { runningVersion: own.version } : {}) });
    } else {
      // Every pod that may have mounted an older share is pinned for a restart (restart-bookkeeping.ts, the seal
      // included), so a serving one with none pending started on its share.
      const runs = serving && !input.restartPending.has(worker);
      if (runs) for (const job of share.jobs) inferred.add(job);
      workers.set(worker, { state: runs ? 'Inferred' : 'Uncovered' });
    }
  }
  const uncovered = input.jobs.filter((j) => !acknowledged.has(j) && !inferred.has(j));
  const unverified = input.jobs.filter((j) => !acknowledged.has(j) && inferred.has(j)).length;
  return { uncovered, unverified, workers };
}
