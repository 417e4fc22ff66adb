import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { assign, AssignmentInputError, lowerBound, parseJobList, type Assignment, type JobSpec } from '../../lib/assignment/index.js';
import { diff } from '../../lib/plan/index.js';

const seedStreams = parseJobList(readFileSync(new URL('../fixtures/seed-streams.txt', import.meta.url), 'utf8')) as string[];
const sts = 'swarm-worker';

function owners(assignment: Assignment): Map<string, string[]> {
  const result = new Map<string, string[]>();
  for (const [worker, jobs] of Object.entries(assignment)) for (const job of jobs) result.set(job, [...(result.get(job) ?? []), worker]);
  return result;
}

describe('assign over the 27 seed streams', () => {
  it('the fixture holds the 27 distinct streams of seeds 001/002', () => {
    expect(seedStreams).toHaveLength(27);
    expect(new Set(seedStreams).size).toBe(27);
    expect(seedStreams).toContain('stream:cars:updated');
  });

  for (const replicas of [1, 2, 3, 4, 5, 27, 30]) {
    it(`gives every stream exactly one worker, balanced, at ${replicas} replicas`, () => {
      const { assignment } = assign({ statefulSetName: sts, replicas, jobs: seedStreams });
      expect(Object.keys(assignment)).toEqual(Array.from({ length: replicas }, (_, i) => `${sts}-${i}`));
      const byJob = owners(assignment);
      expect([...byJob.keys()].sort()).toEqual([...seedStreams].sort());
      for (const holders of byJob.values()) expect(holders).toHaveLength(1);
      const sizes = Object.values(assignment).map((jobs) => jobs.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    });
  }

  it('moves exactly the lower bound on 2 -> 3 -> 4 -> 3 and matches the closed form', () => {
    let previous = assign({ statefulSetName: sts, replicas: 2, jobs: seedStreams }).assignment;
    const moves: number[] = [];
    for (const replicas of [3, 4, 3]) {
      const next = assign({ statefulSetName: sts, replicas, jobs: seedStreams, previous }).assignment;
      const bound = lowerBound({ statefulSetName: sts, replicas, jobs: seedStreams, previous });
      expect(bound?.exact).toBe(true);
      expect(diff(previous, next).moved).toBe(bound!.moves);
      moves.push(bound!.moves);
      previous = next;
    }
    // 2->3: 27 = 9+9+9, workers of 14 and 13 each give up 5 and 4.
    // 3->4: targets 7,7,7,6: 2+2+2 shed. 4->3: worker 3's 6 jobs are orphaned.
    expect(moves).toEqual([9, 6, 6]);
  });

  it('keeps jobs in sorted order within each worker', () => {
    const { assignment } = assign({ statefulSetName: sts, replicas: 3, jobs: seedStreams });
    for (const jobs of Object.values(assignment)) expect([...jobs]).toEqual([...jobs].sort());
  });
});

describe('assign input validation', () => {
  it('names duplicate jobs', () => {
    expect(() => assign({ statefulSetName: sts, replicas: 2, jobs: ['a', 'b', 'a', { name: 'b', weight: 2 }, 'c'] })).toThrow(
      new AssignmentInputError('duplicate job names: "a", "b"'),
    );
  });

  it.each([
    [{ name: 'x', weight: 0 }, /weight must be an integer from 1 to 1000/],
    [{ name: 'x', weight: 1001 }, /weight must be an integer/],
    [{ name: 'x', weight: 1.5 }, /weight must be an integer/],
    [{ name: '' }, /"name" must be a non-empty string/],
    ['', /empty name/],
    [{ name: 'x', dedicated: 'yes' }, /dedicated must be true or false/],
    [{ name: 'x', colour: 'red' }, /unknown field "colour"/],
  ])('rejects %j', (spec, message) => {
    expect(() => assign({ statefulSetName: sts, replicas: 2, jobs: [spec as JobSpec] })).toThrow(message);
  });

  it('rejects a negative or fractional replica count', () => {
    expect(() => assign({ statefulSetName: sts, replicas: -1, jobs: [] })).toThrow(/replicas must be a non-negative integer/);
    expect(() => assign({ statefulSetName: sts, replicas: 1.5, jobs: [] })).toThrow(/replicas must be a non-negative integer/);
  });

  it('assigns nothing, and no workers, at zero replicas', () => {
    expect(assign({ statefulSetName: sts, replicas: 0, jobs: ['a'] }).assignment).toEqual({});
  });

  it('lists every worker, empty ones included', () => {
    expect(assign({ statefulSetName: 'w', replicas: 3, jobs: ['only'] }).assignment).toEqual({ 'w-0': ['only'], 'w-1': [], 'w-2': [] });
  });
});

describe('stickiness', () => {
  it('changes nothing when the inputs are unchanged', () => {
    const first = assign({ statefulSetName: sts, replicas: 4, jobs: seedStreams }).assignment;
    expect(assign({ statefulSetName: sts, replicas: 4, jobs: seedStreams, previous: first }).assignment).toEqual(first);
  });

  it('keeps an unbalanced previous layout as far as balance allows', () => {
    const previous = { 'w-0': ['a', 'b', 'c', 'd'], 'w-1': [] };
    const { assignment } = assign({ statefulSetName: 'w', replicas: 2, jobs: ['a', 'b', 'c', 'd'], previous });
    expect(assignment['w-0']).toHaveLength(2);
    expect(diff(previous, assignment).moved).toBe(2);
  });

  it('ignores workers of other StatefulSets and jobs no longer listed', () => {
    const previous = { 'other-0': ['a'], 'w-0': ['gone', 'b'], 'w-01': ['c'] };
    const { assignment } = assign({ statefulSetName: 'w', replicas: 1, jobs: ['a', 'b', 'c'], previous });
    expect(assignment).toEqual({ 'w-0': ['a', 'b', 'c'] });
  });

  it('leaves a job listed under two workers with the lower ordinal', () => {
    const previous = { 'w-1': ['a', 'b'], 'w-0': ['a'] };
    const { assignment } = assign({ statefulSetName: 'w', replicas: 2, jobs: ['a', 'b'], previous });
    expect(assignment).toEqual({ 'w-0': ['a'], 'w-1': ['b'] });
  });
});

describe('dedicated jobs', () => {
  const jobs: JobSpec[] = [{ name: 'cnbc', dedicated: true }, { name: 'bbc', dedicated: true }, 'a', 'b', 'c', 'd', 'e'];

  it('gives each dedicated job a worker of its own and balances the rest over the others', () => {
    const { assignment, unhonouredDedications } = assign({ statefulSetName: 'w', replicas: 4, jobs });
    expect(unhonouredDedications).toEqual([]);
    const byJob = owners(assignment);
    for (const name of ['cnbc', 'bbc']) expect(assignment[byJob.get(name)![0]!]).toEqual([name]);
    // Fresh dedications take the lowest ordinals, which survive scale-down.
    expect(new Set([byJob.get('cnbc')![0], byJob.get('bbc')![0]])).toEqual(new Set(['w-0', 'w-1']));
    const sharedSizes = ['w-2', 'w-3'].map((w) => assignment[w]!.length);
    expect(sharedSizes.sort()).toEqual([2, 3]);
  });

  it('keeps a dedicated job on its worker across a resize', () => {
    const before = assign({ statefulSetName: 'w', replicas: 4, jobs }).assignment;
    const after = assign({ statefulSetName: 'w', replicas: 6, jobs, previous: before }).assignment;
    for (const name of ['cnbc', 'bbc']) expect(owners(after).get(name)).toEqual(owners(before).get(name));
  });

  it('says which dedications cannot be honoured, and still places every job', () => {
    const { assignment, unhonouredDedications } = assign({ statefulSetName: 'w', replicas: 2, jobs });
    expect(unhonouredDedications).toHaveLength(1);
    expect(unhonouredDedications[0]!.reason).toMatch(/2 replica\(s\) cannot give 2 dedicated job\(s\) a worker each and keep one worker for the shared jobs/);
    const byJob = owners(assignment);
    expect(byJob.size).toBe(jobs.length);
    for (const holders of byJob.values()) expect(holders).toHaveLength(1);
  });

  it('uses every worker when all jobs are dedicated and there are enough', () => {
    const all: JobSpec[] = ['x', 'y', 'z'].map((name) => ({ name, dedicated: true }));
    const { assignment, unhonouredDedications } = assign({ statefulSetName: 'w', replicas: 3, jobs: all });
    expect(unhonouredDedications).toEqual([]);
    expect(Object.values(assignment).map((j) => j.length)).toEqual([1, 1, 1]);
  });

  it('has no lower bound model: lowerBound says so', () => {
    expect(lowerBound({ statefulSetName: 'w', replicas: 3, jobs, previous: {} })).toBeUndefined();
  });
});

describe('weighted jobs', () => {
  it('keeps max - min load within the largest weight', () => {
    const jobs: JobSpec[] = Array.from({ length: 40 }, (_, i) => ({ name: `j${i}`, weight: ((i * 37) % 50) + 1 }));
    for (const replicas of [2, 3, 7, 13]) {
      const { assignment } = assign({ statefulSetName: 'w', replicas, jobs });
      const weightOf = new Map(jobs.map((j) => [(j as { name: string }).name, (j as { weight: number }).weight]));
      const loads = Object.values(assignment).map((names) => names.reduce((s, n) => s + weightOf.get(n)!, 0));
      expect(Math.max(...loads) - Math.min(...loads)).toBeLessThanOrEqual(50);
    }
  });
});

describe('weighted movement', () => {
  // Not guaranteed for weighted inputs (the weighted bound is a relaxation; about
  // 0.2% of small random cases exceed it by 1-2 moves), but held on these shapes,
  // which bench/RESULTS.md also reports. Shedding down to the average instead
  // of to the fill line moves 56 jobs for a bound of 50 on the first one.
  function uniformWeights(count: number, wmax: number, seed: number): Array<{ name: string; weight: number }> {
    let state = seed;
    const random = () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32;
    return Array.from({ length: count }, (_, i) => ({ name: `stream-${i}`, weight: 1 + Math.floor(random() * wmax) }));
  }
  it.each([
    [1000, 10, 10, 12345],
    [1000, 1000, 50, 7],
    [5000, 10, 100, 99],
  ])('%i jobs of weight 1..%i: %i -> n+1 and n-1 move at most 1.05 x the relaxed bound + 1 (seed %i)', (count, wmax, n, seed) => {
    const jobs = uniformWeights(count, wmax, seed);
    const before = assign({ statefulSetName: 'w', replicas: n, jobs }).assignment;
    for (const replicas of [n + 1, n - 1]) {
      const after = assign({ statefulSetName: 'w', replicas, jobs, previous: before }).assignment;
      const bound = lowerBound({ statefulSetName: 'w', replicas, jobs, previous: before })!;
      expect(bound.exact).toBe(false);
      expect(diff(before, after).moved).toBeLessThanOrEqual(1.05 * bound.moves + 1);
    }
  });
});

describe('parseJobList', () => {
  it('reads one name per line, skipping blanks and comments', () => {
    expect(parseJobList('# streams\na\n\n  b  \n# c\n')).toEqual(['a', 'b']);
  });
  it('reads a YAML list of names and objects', () => {
    expect(parseJobList('- a\n- {name: b, weight: 3}\n- name: c\n  dedicated: true\n')).toEqual([
      { name: 'a', weight: 1, dedicated: false },
      { name: 'b', weight: 3, dedicated: false },
      { name: 'c', weight: 1, dedicated: true },
    ]);
  });
  it('names the line of a bad YAML entry', () => {
    expect(() => parseJobList('- a\n- {name: b, weight: 0}\n', 'jobs.yml')).toThrow(/^jobs\.yml:2: job "b": weight must be/);
  });
});

describe('lowerBound input validation', () => {
  it('names duplicate jobs, as assign does', () => {
    expect(() => lowerBound({ statefulSetName: 'w', replicas: 2, jobs: ['a', 'b', 'a'], previous: {} })).toThrow(/^duplicate job names: "a"$/);
  });
});
