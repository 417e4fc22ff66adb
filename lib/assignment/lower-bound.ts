// The fewest surviving jobs that must change owner to reach any balanced
// result from `previous`. Computed in closed form, independently of the
// assigner's procedure, so tests can hold the assigner to it.
//
// Unweighted (exact): surviving jobs on removed workers must move; a kept
// worker holding h jobs with target t must shed max(0, h - t). The S mod m
// ceil targets are best spent on workers holding more than the floor, so
//   LB = orphans + Σ max(0, h_i - q) - min(r, #{i : h_i > q}),  q = ⌊S/m⌋, r = S mod m.
//
// Weighted (a relaxation, not exact): every final load lies in
// [avg - wmax, avg + wmax], since min ≤ avg ≤ max and max - min ≤ wmax. A
// worker above avg + wmax must shed at least as many jobs as it takes when
// shedding its heaviest first; a worker below avg - wmax must receive weight
// that new and orphaned jobs cannot supply, and each moved job brings at most
// the heaviest remaining kept weight. The bound is the larger of the two.
import { AssignmentInputError } from './errors.js';
import { toJob } from './jobs.js';
import type { AssignInput } from './types.js';
import { sortWorkers, workerIndex } from './workers.js';

export interface LowerBound {
  /** Fewest surviving jobs that must change owner. */
  readonly moves: number;
  /** True when `moves` is attainable (unweighted); false for the weighted relaxation. */
  readonly exact: boolean;
}

/** Undefined when dedicated jobs are present: balance then excludes dedicated workers and this bound does not model it. */
export function lowerBound(input: AssignInput): LowerBound | undefined {
  const { replicas, statefulSetName, previous } = input;
  const start = input.startOrdinal ?? 0;
  const jobs = input.jobs.map((spec, i) => toJob(spec, i));
  if (jobs.some((j) => j.dedicated)) return undefined;
  if (replicas === 0 || jobs.length === 0 || !previous) return { moves: 0, exact: true };
  const weightOf = new Map(jobs.map((j) => [j.name, j.weight]));
  if (weightOf.size !== jobs.length) {
    const seenOnce = new Set<string>();
    const repeated = new Set(jobs.filter((j) => seenOnce.size === seenOnce.add(j.name).size).map((j) => JSON.stringify(j.name)));
    throw new AssignmentInputError(`duplicate job names: ${[...repeated].sort().join(', ')}`);
  }

  const keptWeights: number[][] = Array.from({ length: replicas }, () => []);
  const seen = new Set<string>();
  let orphans = 0;
  let orphanWeight = 0;
  // Lowest ordinal first, as the assigner does: a job listed twice counts once, with its lowest-ordinal holder.
  for (const worker of sortWorkers(statefulSetName, Object.keys(previous))) {
    const list = previous[worker]!;
    const index = workerIndex(statefulSetName, worker, replicas, start);
    for (const job of list) {
      const weight = weightOf.get(job);
      if (weight === undefined || seen.has(job)) continue;
      seen.add(job);
      if (index !== undefined) keptWeights[index]!.push(weight);
      else {
        orphans++;
        orphanWeight += weight;
      }
    }
  }
  const unweighted = jobs.every((j) => j.weight === 1);
  if (unweighted) {
    const q = Math.floor(jobs.length / replicas);
    const r = jobs.length % replicas;
    let over = 0;
    let aboveFloor = 0;
    for (const kept of keptWeights) {
      over += Math.max(0, kept.length - q);
      if (kept.length > q) aboveFloor++;
    }
    return { moves: orphans + over - Math.min(r, aboveFloor), exact: true };
  }

  const total = jobs.reduce((s, j) => s + j.weight, 0);
  const wmax = jobs.reduce((m, j) => Math.max(m, j.weight), 0);
  const avg = total / replicas;
  let shed = 0;
  let deficit = 0;
  const allKept: number[] = [];
  for (const kept of keptWeights) {
    kept.sort((a, b) => b - a);
    allKept.push(...kept);
    let load = kept.reduce((s, w) => s + w, 0);
    for (let k = 0; k < kept.length && load > avg + wmax; k++) {
      load -= kept[k]!;
      shed++;
    }
    deficit += Math.max(0, avg - wmax - kept.reduce((s, w) => s + w, 0));
  }
  const newWeight = jobs.filter((j) => !seen.has(j.name)).reduce((s, j) => s + j.weight, 0);
  let uncovered = deficit - newWeight - orphanWeight;
  let receive = 0;
  allKept.sort((a, b) => b - a);
  for (let k = 0; k < allKept.length && uncovered > 0; k++) {
    uncovered -= allKept[k]!;
    receive++;
  }
  return { moves: orphans + Math.max(shed, receive), exact: false };
}
