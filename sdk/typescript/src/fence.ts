// Fencing (docs/worker-protocol.md W25–W30): what a worker may do while its
// heartbeat is stale, and when it may run its share again. Pure, so the rules
// are tested without clocks or files; failover.ts and worker.ts act on them.
//
// Under BreakBeforeMake a stale worker stops every job before its pod can turn
// NotReady (Swarm then counts it as stopped and gives its jobs to peers), and
// stays fenced until its heartbeat is fresh again and the share it reads
// names no job (whether it ran any when it fenced or not). A config merely newer than the one it
// fenced at is not enough: Swarm may have written it while it still saw the
// pod Ready, naming the jobs it then gave a peer (issue 34, seeds 1921, 2432).
// An empty share is always safe to run; what it gains after comes by the
// ordinary staged hand-off. While it waits it says so (FENCED_ANNOTATION on
// its acknowledgement), so Swarm empties its share without waiting for the
// probe. Under MakeBeforeBreak a stale worker keeps its jobs (a duplicate is
// allowed there, a gap is not) and only reports itself not ready.
import type { FailoverSettings } from '../../../lib/workerconfig/index.js';

export interface Fence {
  /** Runs nothing, and starts nothing, until it may resume. */
  readonly fenced: boolean;
  /** The config version in force when it fenced (undefined: none read yet); for the logs. */
  readonly atVersion?: number | undefined;
  /**
   * It fenced on going stale, having stopped whatever it ran (or a process before it did): it waits for an
   * empty share. Whether it ran anything then does not matter: Swarm may have given it jobs in the config it
   * wrote while the pod was still Ready, then expired it and given them to a peer.
   */
  readonly stoppedJobs: boolean;
}

export const UNFENCED: Fence = { fenced: false, stoppedJobs: false };
/** A worker under BreakBeforeMake starts fenced: it runs nothing before its first renewal. */
export const STARTING: Fence = { fenced: true, stoppedJobs: false };
/** A new process of a pod whose previous one fenced, or went stale: it waits for an empty share, as if it had stopped jobs. */
export const STARTING_STALE: Fence = { fenced: true, stoppedJobs: true };

export const breaksFirst = (settings: FailoverSettings | undefined): boolean => settings?.handoff === 'BreakBeforeMake';

/** The fence after the heartbeat went stale at config `version`. */
export function fenceAt(fence: Fence, version: number | undefined): Fence {
  return { fenced: true, atVersion: fence.fenced ? (fence.atVersion ?? version) : version, stoppedJobs: true };
}

/** It must say FENCED_ANNOTATION in its acknowledgement: fenced, waiting for an empty share. */
export const saysFenced = (fence: Fence): boolean => fence.fenced && fence.stoppedJobs;

/** What a new process finds in its pod's own Leases (those held by its pod's uid) when it starts. */
export interface StartFacts {
  /** Its acknowledgement Lease carries FENCED_ANNOTATION. */
  readonly ackFenced: boolean;
  /** Its heartbeat Lease's renewTime (ms since the epoch), if it has one. */
  readonly renewedAt?: number | undefined;
  /** Its own wall clock now (ms since the epoch), and the renew deadline D (ms). */
  readonly now: number;
  readonly renewDeadlineMs: number;
}

/**
 * The fence a process starts under, breaking first (W27): fenced with stopped
 * jobs when its pod's previous process said it fenced, or went stale (it may
 * have expired, and its jobs moved, while the volume still names them);
 * otherwise fenced only until its first renewal (STARTING).
 */
export function startingFence(facts: StartFacts): Fence {
  const stale = facts.renewedAt !== undefined && facts.now - facts.renewedAt >= facts.renewDeadlineMs;
  return facts.ackFenced || stale ? STARTING_STALE : STARTING;
}

/** How many jobs `text` gives `pod` (undefined: no config file, which runs nothing; 'unreadable': garbled). */
export type ShareSize = number | undefined | 'unreadable';

/**
 * The fence a config that arrives is applied under (UNFENCED), or undefined:
 * hold it until the worker may resume (`share` read only then: how many jobs
 * the config gives this worker). A fence means nothing under MakeBeforeBreak
 * (`breaks` false): one closed before the Swarm switched handoff lifts, and
 * the config it held is dropped, never redelivered when the heartbeat is fresh again.
 */
export function admit(fence: Fence, breaks: boolean, fresh: boolean, share: () => ShareSize): Fence | undefined {
  if (!breaks || !fence.fenced) return UNFENCED;
  return mayResume(fence, fresh, share()) ? UNFENCED : undefined;
}

/**
 * A fenced worker may apply a config giving it `share` jobs once its heartbeat
 * is fresh, and — if it fenced on going stale — only one that gives it none (at
 * any version). A new process's first fence (STARTING) waits for the heartbeat alone.
 */
export function mayResume(fence: Fence, fresh: boolean, share: ShareSize): boolean {
  if (!fence.fenced) return true;
  if (!fresh || share === 'unreadable') return false;
  return !fence.stoppedJobs || share === undefined || share === 0;
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
      if (input.fence.fenced && !input.fencing) return { ready: false, reason: input.fence.stoppedJobs ? 'fenced: waiting for a fresh heartbeat and an empty share' : 'fenced: waiting for a fresh heartbeat' };
    } else {
      if (!input.fresh) return { ready: false, reason: 'heartbeat stale' };
      if (!input.healthy) return { ready: false, reason: 'jobs unhealthy' };
    }
  }
  if (!input.loaded) return { ready: false, reason: 'share not read yet' };
  return { ready: true };
}
