// What changes between two assignments: moved jobs and changed workers.
import type { Assignment } from '../assignment/types.js';
import { compareNames } from '../assignment/jobs.js';
import { compareWorkers } from '../assignment/workers.js';

export interface Move {
  readonly job: string;
  /** Previous owner; null for a new job. */
  readonly from: string | null;
  /** Next owner; null for a removed job. */
  readonly to: string | null;
}

export interface AssignmentDiff {
  /** Every job whose owner differs, sorted by job name. */
  readonly moves: readonly Move[];
  /** Surviving jobs (in both assignments) that changed owner: the quantity the lower bound bounds. */
  readonly moved: number;
  /** Workers in both assignments whose job set changed: the restart candidates. */
  readonly changedWorkers: readonly string[];
  /** Workers only in `next` (the StatefulSet creates them) and only in `previous` (it deletes them). */
  readonly addedWorkers: readonly string[];
  readonly removedWorkers: readonly string[];
}

export function ownersOf(assignment: Assignment): Map<string, string> {
  const owners = new Map<string, string>();
  // Sorted workers, first holder wins: a job listed twice has one deterministic owner.
  for (const worker of Object.keys(assignment).sort(compareWorkers)) {
    for (const job of assignment[worker]!) if (!owners.has(job)) owners.set(job, worker);
  }
  return owners;
}

export function diff(previous: Assignment, next: Assignment, order: (a: string, b: string) => number = compareWorkers): AssignmentDiff {
  const before = ownersOf(previous);
  const after = ownersOf(next);
  const moves: Move[] = [];
  let moved = 0;
  for (const [job, from] of before) {
    const to = after.get(job) ?? null;
    if (to === from) continue;
    moves.push({ job, from, to });
    if (to !== null) moved++;
  }
  for (const [job, to] of after) if (!before.has(job)) moves.push({ job, from: null, to });
  moves.sort((a, b) => compareNames(a.job, b.job));

  const changedWorkers: string[] = [];
  const addedWorkers: string[] = [];
  for (const worker of Object.keys(next)) {
    const was = previous[worker];
    if (was === undefined) addedWorkers.push(worker);
    else if (!sameSet(was, next[worker]!)) changedWorkers.push(worker);
  }
  const removedWorkers = Object.keys(previous).filter((w) => next[w] === undefined);
  return {
    moves,
    moved,
    changedWorkers: changedWorkers.sort(order),
    addedWorkers: addedWorkers.sort(order),
    removedWorkers: removedWorkers.sort(order),
  };
}

function sameSet(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const set = new Set(a);
  return set.size === a.length && b.every((job) => set.has(job));
}
