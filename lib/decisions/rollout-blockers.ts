// A rollout that does not finish: the workers holding it up, why, and since
// when, from observed times only; past spec.restart.progressDeadlineSeconds
// the rollout is stuck (status reports it Degraded, RolloutStuck, naming them).
import { DEFAULTS } from '../api/schema.js';
import type { PodView } from '../kube/types.js';
import type { Coverage } from './coverage.js';
import { summariseWorkers } from './condition-messages.js';
import type { StatusObservation } from './status-observation.js';
import { isServing } from './workers.js';

/** The worker holding a rollout up, why, and since when (observed times only). */
export interface Blocker {
  worker: string;
  why: string;
  /** RFC 3339: the rollout's last observed progress (see rolloutBlockers). */
  since: string;
}

/** The latest of the valid times (of equal ones, the last given); each parsed once. */
function later(...times: Array<string | undefined>): string | undefined {
  let latest: string | undefined;
  let latestMs = -Infinity;
  for (const t of times) {
    const ms = t === undefined ? NaN : Date.parse(t);
    if (Number.isNaN(ms) || ms < latestMs) continue;
    latest = t;
    latestMs = ms;
  }
  return latest;
}

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
      // Serving with no restart pending: only one that acknowledges can be Uncovered (coverage.ts).
      unacknowledged.push({ worker, why: `has not acknowledged its share of version ${input.version}`, since });
    }
  }
  return [...down, ...restarting, ...unacknowledged];
}

/** The RolloutStuck message when the first blocker has been blocked longer than spec.restart.progressDeadlineSeconds, else undefined. */
export function stuckRollout(
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
