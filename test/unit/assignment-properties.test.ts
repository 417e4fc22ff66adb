// Properties of the assignment engine over random job sets, resizes and churn.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assign, lowerBound, type Assignment, type JobSpec } from '../../lib/assignment/index.js';
import { diff } from '../../lib/plan/index.js';

const sts = 'w';
const names = fc.uniqueArray(fc.string({ minLength: 1, maxLength: 12 }), { maxLength: 120 });
const replicaCount = fc.integer({ min: 1, max: 25 });

function holders(assignment: Assignment): Map<string, number> {
  const count = new Map<string, number>();
  for (const jobs of Object.values(assignment)) for (const job of jobs) count.set(job, (count.get(job) ?? 0) + 1);
  return count;
}

function spread(assignment: Assignment): number {
  const sizes = Object.values(assignment).map((jobs) => jobs.length);
  return Math.max(...sizes) - Math.min(...sizes);
}

function shuffled<T>(items: readonly T[], seed: number): T[] {
  const copy = [...items];
  let state = seed >>> 0 || 1;
  for (let i = copy.length - 1; i > 0; i--) {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    const j = state % (i + 1);
    [copy[i], copy[j]] = [copy[j]!, copy[i]!];
  }
  return copy;
}

/** A previous assignment with survivors scattered anywhere, as an arbitrary (even unbalanced) config could be. */
const arbitraryPrevious = (jobs: readonly string[]) =>
  fc.tuple(fc.integer({ min: 1, max: 25 }), fc.array(fc.nat(), { minLength: jobs.length, maxLength: jobs.length })).map(([n, picks]) => {
    const previous: Record<string, string[]> = {};
    for (let w = 0; w < n; w++) previous[`${sts}-${w}`] = [];
    jobs.forEach((job, i) => previous[`${sts}-${picks[i]! % n}`]!.push(job));
    return previous;
  });

describe('assignment properties', () => {
  it('every job exactly once and max - min <= 1, from scratch and from any previous layout', () => {
    fc.assert(
      fc.property(names.chain((jobs) => fc.tuple(fc.constant(jobs), replicaCount, fc.option(arbitraryPrevious(jobs), { nil: undefined }))), ([jobs, replicas, previous]) => {
        const { assignment } = assign({ statefulSetName: sts, replicas, jobs, previous });
        expect(Object.keys(assignment)).toHaveLength(replicas);
        const count = holders(assignment);
        expect(count.size).toBe(jobs.length);
        for (const c of count.values()) expect(c).toBe(1);
        expect(spread(assignment)).toBeLessThanOrEqual(1);
      }),
      { numRuns: 300 },
    );
  });

  it('is deterministic whatever the input order, with or without a previous assignment', () => {
    fc.assert(
      fc.property(names.chain((jobs) => fc.tuple(fc.constant(jobs), replicaCount, arbitraryPrevious(jobs), fc.integer())), ([jobs, replicas, previous, seed]) => {
        const fresh = assign({ statefulSetName: sts, replicas, jobs }).assignment;
        expect(assign({ statefulSetName: sts, replicas, jobs: shuffled(jobs, seed) }).assignment).toEqual(fresh);
        const sticky = assign({ statefulSetName: sts, replicas, jobs, previous }).assignment;
        const reordered = Object.fromEntries(shuffled(Object.entries(previous), seed + 1).map(([w, list]) => [w, shuffled(list, seed + 2)]));
        expect(assign({ statefulSetName: sts, replicas, jobs: shuffled(jobs, seed + 3), previous: reordered }).assignment).toEqual(sticky);
      }),
      { numRuns: 200 },
    );
  });

  it('moves at most 1.05 x lower bound + 1 (in fact exactly the bound) on resizes and job churn', () => {
    const scenario = fc.record({
      jobs: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 0, maxLength: 300 }),
      replicas: fc.integer({ min: 1, max: 40 }),
      steps: fc.array(
        fc.oneof(
          fc.constant<'up' | 'down'>('up'),
          fc.constant<'up' | 'down'>('down'),
          fc.record({ add: fc.uniqueArray(fc.string({ minLength: 9, maxLength: 12 }), { maxLength: 20 }), remove: fc.nat({ max: 20 }) }),
        ),
        { minLength: 1, maxLength: 8 },
      ),
    });
    fc.assert(
      fc.property(scenario, ({ jobs: initial, replicas: start, steps }) => {
        let jobs = initial;
        let replicas = start;
        let previous = assign({ statefulSetName: sts, replicas, jobs }).assignment;
        for (const step of steps) {
          if (step === 'up') replicas++;
          else if (step === 'down') replicas = Math.max(1, replicas - 1);
          else jobs = [...jobs.slice(step.remove), ...step.add.filter((j) => !jobs.includes(j))];
          const next = assign({ statefulSetName: sts, replicas, jobs, previous }).assignment;
          const bound = lowerBound({ statefulSetName: sts, replicas, jobs, previous })!;
          const moved = diff(previous, next).moved;
          expect(moved).toBeLessThanOrEqual(1.05 * bound.moves + 1);
          expect(moved).toBe(bound.moves);
          expect(spread(next)).toBeLessThanOrEqual(1);
          previous = next;
        }
      }),
      { numRuns: 200 },
    );
  });

  it('the unweighted lower bound is the true minimum (brute force over tiny cases)', () => {
    const tiny = fc.record({
      jobCount: fc.integer({ min: 0, max: 6 }),
      replicas: fc.integer({ min: 1, max: 3 }),
      previousReplicas: fc.integer({ min: 1, max: 4 }),
      picks: fc.array(fc.nat(), { minLength: 6, maxLength: 6 }),
      newJobs: fc.integer({ min: 0, max: 2 }),
    });
    fc.assert(
      fc.property(tiny, ({ jobCount, replicas, previousReplicas, picks, newJobs }) => {
        const survivors = Array.from({ length: jobCount }, (_, i) => `j${i}`);
        const previous: Record<string, string[]> = {};
        for (let w = 0; w < previousReplicas; w++) previous[`${sts}-${w}`] = [];
        survivors.forEach((job, i) => previous[`${sts}-${picks[i]! % previousReplicas}`]!.push(job));
        const jobs = [...survivors, ...Array.from({ length: newJobs }, (_, i) => `new${i}`)];
        let best = Infinity;
        // Every way of giving the jobs owners 0..replicas-1; keep the balanced ones.
        for (let code = 0; code < replicas ** jobs.length; code++) {
          const sizes = new Array<number>(replicas).fill(0);
          let moves = 0;
          let c = code;
          jobs.forEach((job, i) => {
            const w = c % replicas;
            c = Math.floor(c / replicas);
            sizes[w]!++;
            if (i < jobCount && previous[`${sts}-${w}`]?.includes(job) !== true) moves++;
          });
          if (Math.max(...sizes) - Math.min(...sizes) <= 1) best = Math.min(best, moves);
        }
        expect(lowerBound({ statefulSetName: sts, replicas, jobs, previous })!.moves).toBe(best);
      }),
      { numRuns: 300 },
    );
  });

  it('weighted: every job once, max - min load <= largest weight, deterministic under shuffling', () => {
    const weighted = fc.uniqueArray(fc.record({ name: fc.string({ minLength: 1, maxLength: 8 }), weight: fc.integer({ min: 1, max: 1000 }) }), {
      selector: (j) => j.name,
      minLength: 1,
      maxLength: 150,
    });
    fc.assert(
      fc.property(weighted, replicaCount, replicaCount, fc.integer(), (jobs, from, to, seed) => {
        const weightOf = new Map(jobs.map((j) => [j.name, j.weight]));
        const wmax = Math.max(...jobs.map((j) => j.weight));
        const first = assign({ statefulSetName: sts, replicas: from, jobs }).assignment;
        const next = assign({ statefulSetName: sts, replicas: to, jobs, previous: first }).assignment;
        expect(assign({ statefulSetName: sts, replicas: to, jobs: shuffled(jobs, seed), previous: first }).assignment).toEqual(next);
        for (const assignment of [first, next]) {
          const count = holders(assignment);
          expect(count.size).toBe(jobs.length);
          const loads = Object.values(assignment).map((list) => list.reduce((s, n) => s + weightOf.get(n)!, 0));
          expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(wmax);
        }
        const bound = lowerBound({ statefulSetName: sts, replicas: to, jobs, previous: first })!;
        expect(bound.exact).toBe(jobs.every((j) => j.weight === 1));
        expect(diff(first, next).moved).toBeGreaterThanOrEqual(bound.moves);
      }),
      { numRuns: 200 },
    );
  });

  it('dedicated: every job once, honoured ones alone, shared workers balanced', () => {
    const jobsArb = fc.uniqueArray(fc.record({ name: fc.string({ minLength: 1, maxLength: 6 }), dedicated: fc.boolean() }), {
      selector: (j) => j.name,
      maxLength: 40,
    });
    fc.assert(
      fc.property(jobsArb, replicaCount, replicaCount, (jobs: JobSpec[], from, to) => {
        const first = assign({ statefulSetName: sts, replicas: from, jobs });
        const { assignment, unhonouredDedications } = assign({ statefulSetName: sts, replicas: to, jobs, previous: first.assignment });
        const count = holders(assignment);
        expect(count.size).toBe(jobs.length);
        const unhonoured = new Set(unhonouredDedications.map((u) => u.job));
        const dedicated = jobs.filter((j) => typeof j !== 'string' && j.dedicated && !unhonoured.has(j.name)).map((j) => (j as { name: string }).name);
        const lone = new Set<string>();
        for (const [worker, list] of Object.entries(assignment)) {
          if (list.some((job) => dedicated.includes(job))) {
            expect(list).toHaveLength(1);
            lone.add(worker);
          }
        }
        const sharedSizes = Object.entries(assignment).filter(([w]) => !lone.has(w)).map(([, list]) => list.length);
        if (sharedSizes.length > 0) expect(Math.max(...sharedSizes) - Math.min(...sharedSizes)).toBeLessThanOrEqual(1);
        // Honoured as many as possible: all of them, or all workers but one for the shared jobs.
        const dedicatedTotal = jobs.filter((j) => typeof j !== 'string' && j.dedicated).length;
        const sharedTotal = jobs.length - dedicatedTotal;
        const capacity = sharedTotal > 0 || dedicatedTotal > to ? to - 1 : to;
        expect(dedicated.length).toBe(Math.min(dedicatedTotal, capacity));
      }),
      { numRuns: 300 },
    );
  });
});
