// Fencing (docs/worker-protocol.md W25–W30): what a worker may do while its
// heartbeat is stale, and when it may run its share again. Pure, so the rules
// are tested without clocks or files; worker.ts acts on them.
//
// Under BreakBeforeMake a stale worker stops every job before its pod can turn
// NotReady (Swarm then counts it as stopped and gives its jobs to peers), and
// stays fenced until its heartbeat is fresh again and, if it stopped any job,
// it has read a config newer than the one it fenced at: Swarm writes one when
// it hands the jobs over, so it never runs what its current share no longer
// names. Under MakeBeforeBreak a stale worker keeps its jobs (a duplicate is
// allowed there, a gap is not) and only reports itself not ready.
import type { FailoverSettings } from '../../../lib/workerconfig/index.js';

export interface Fence {
  /** Runs nothing, and starts nothing, until it may resume. */
  readonly fenced: boolean;
  /** The config version in force when it fenced (undefined: none read yet). */
  readonly atVersion?: number | undefined;
  /** It stopped jobs when it fenced: it waits for a newer config before running any. */
  readonly stoppedJobs: boolean;
}

export const UNFENCED: Fence = { fenced: false, stoppedJobs: false };
/** A worker under BreakBeforeMake starts fenced: it runs nothing before its first renewal. */
export const STARTING: Fence = { fenced: true, stoppedJobs: false };

export const breaksFirst = (settings: FailoverSettings | undefined): boolean => settings?.handoff === 'BreakBeforeMake';

/** The fence after the heartbeat went stale with `running` jobs at config `version`. */
export function fenceAt(fence: Fence, version: number | undefined, running: number): Fence {
  return { fenced: true, atVersion: fence.fenced ? (fence.atVersion ?? version) : version, stoppedJobs: fence.stoppedJobs || running > 0 };
}

/**
 * The fence once the heartbeat is fresh again with no config held back: one
 * that stopped nothing waits only for that (W27), so it lifts; no config need
 * come (Swarm writes none for a worker that had no jobs to hand over).
 */
export const freshAgain = (fence: Fence): Fence => (fence.fenced && !fence.stoppedJobs ? UNFENCED : fence);

/**
 * The fence a config that arrives is applied under (UNFENCED), or undefined:
 * hold it until the worker may resume (`version` read only then). A fence
 * means nothing under MakeBeforeBreak (`breaks` false): one closed before the
 * Swarm switched handoff lifts, and the config it held — older than this one —
 * is dropped, never redelivered when the heartbeat is fresh again.
 */
export function admit(fence: Fence, breaks: boolean, fresh: boolean, version: () => number | undefined | 'unreadable'): Fence | undefined {
  if (!breaks || !fence.fenced) return UNFENCED;
  return mayResume(fence, fresh, version()) ? UNFENCED : undefined;
}

/**
 * A fenced worker may apply `version` (undefined: no config file, which runs
 * nothing) once its heartbeat is fresh, and — if it stopped jobs — only a
 * config newer than the one it fenced at.
 */
export function mayResume(fence: Fence, fresh: boolean, version: number | undefined | 'unreadable'): boolean {
  if (!fence.fenced) return true;
  if (!fresh || version === 'unreadable') return false;
  if (!fence.stoppedJobs || version === undefined) return true;
  return fence.atVersion === undefined || version > fence.atVersion;
}

export interface ReadinessInput {
  readonly settings: FailoverSettings | undefined;
  readonly fresh: boolean;
  readonly healthy: boolean;
  readonly fence: Fence;
  /** The stops it fenced with have not all returned yet: it still counts as running them. */
  readonly fencing: boolean;
  /** The share has been read (a worker that has read none is not ready yet). */
  readonly loaded: boolean;
  readonly stopping: boolean;
}

export type Readiness = { readonly ready: true } | { readonly ready: false; readonly reason: string };

/**
 * Ready: serving its share. With failover, not ready while fenced
 * (BreakBeforeMake: only once its jobs are stopped, worker.ts) or, under
 * MakeBeforeBreak, while its heartbeat is stale or its jobs unhealthy: the
 * kubelet then marks the pod NotReady and Swarm hands its jobs to peers.
 */
export function readiness(input: ReadinessInput): Readiness {
  if (input.stopping) return { ready: false, reason: 'stopping' };
  if (input.settings) {
    if (breaksFirst(input.settings)) {
      // Ready until every fencing stop returned: NotReady tells Swarm the jobs are stopped.
      if (input.fence.fenced && !input.fencing) return { ready: false, reason: input.fence.stoppedJobs ? 'fenced: waiting for a fresh heartbeat and a newer config' : 'fenced: waiting for a fresh heartbeat' };
    } else {
      if (!input.fresh) return { ready: false, reason: 'heartbeat stale' };
      if (!input.healthy) return { ready: false, reason: 'jobs unhealthy' };
    }
  }
  if (!input.loaded) return { ready: false, reason: 'share not read yet' };
  return { ready: true };
}
