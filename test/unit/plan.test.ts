import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assign } from '../../lib/assignment/index.js';
import { diff, restartOrder } from '../../lib/plan/index.js';

describe('diff', () => {
  it('lists moved, new and removed jobs, and only kept workers as restart candidates', () => {
    const previous = { 'w-0': ['a', 'b'], 'w-1': ['c', 'gone'], 'w-2': ['d'] };
    const next = { 'w-0': ['a'], 'w-1': ['c', 'b', 'fresh'], 'w-3': ['d'] };
    const change = diff(previous, next);
    expect(change.moves).toEqual([
      { job: 'b', from: 'w-0', to: 'w-1' },
      { job: 'd', from: 'w-2', to: 'w-3' },
      { job: 'fresh', from: null, to: 'w-1' },
      { job: 'gone', from: 'w-1', to: null },
    ]);
    expect(change.moved).toBe(2);
    expect(change.changedWorkers).toEqual(['w-0', 'w-1']);
    expect(change.addedWorkers).toEqual(['w-3']);
    expect(change.removedWorkers).toEqual(['w-2']);
  });

  it('sees no change between equal assignments listed in different orders', () => {
    const change = diff({ 'w-0': ['a', 'b'], 'w-1': [] }, { 'w-1': [], 'w-0': ['b', 'a'] });
    expect(change).toEqual({ moves: [], moved: 0, changedWorkers: [], addedWorkers: [], removedWorkers: [] });
  });

  it('orders workers by ordinal, not by text', () => {
    const change = diff({ 'w-2': ['a'], 'w-10': ['b'] }, { 'w-2': ['b'], 'w-10': ['a'] });
    expect(change.changedWorkers).toEqual(['w-2', 'w-10']);
  });
});

describe('restartOrder (policy Restart: restarts break first)', () => {
  it('a worker restarts after the workers losing jobs to it', () => {
    // w-0 gives a job to w-1, w-1 gives one to w-2.
    const change = diff({ 'w-0': ['a', 'x'], 'w-1': ['b'], 'w-2': [] }, { 'w-0': ['x'], 'w-1': ['a'], 'w-2': ['b'] });
    expect(restartOrder(change)).toEqual([
      { worker: 'w-0', waitFor: [] },
      { worker: 'w-1', waitFor: ['w-0'] },
      { worker: 'w-2', waitFor: ['w-1'] },
    ]);
  });

  it('breaks a swap cycle at the lowest ordinal and keeps the other wait', () => {
    const change = diff({ 'w-0': ['a'], 'w-1': ['b'] }, { 'w-0': ['b'], 'w-1': ['a'] });
    expect(restartOrder(change)).toEqual([
      { worker: 'w-0', waitFor: [] },
      { worker: 'w-1', waitFor: ['w-0'] },
    ]);
  });

  it('carried waits survive a change that does not touch the waiter', () => {
    const change = diff({ 'w-0': ['a'], 'w-1': ['b'], 'w-2': ['c'] }, { 'w-0': [], 'w-1': ['b'], 'w-2': ['c', 'a'] });
    expect(restartOrder(change, undefined, new Map([['w-1', ['w-0']]]))).toEqual([
      { worker: 'w-0', waitFor: [] },
      { worker: 'w-1', waitFor: ['w-0'] },
      { worker: 'w-2', waitFor: ['w-0'] },
    ]);
  });

  it('never restarts new or removed workers, nor waits for them', () => {
    const jobs = Array.from({ length: 12 }, (_, i) => `j${i}`);
    const before = assign({ statefulSetName: 'w', replicas: 3, jobs }).assignment;
    const after = assign({ statefulSetName: 'w', replicas: 4, jobs, previous: before }).assignment;
    const steps = restartOrder(diff(before, after));
    expect(steps).toEqual([
      { worker: 'w-0', waitFor: [] },
      { worker: 'w-1', waitFor: [] },
      { worker: 'w-2', waitFor: [] },
    ]);
    const down = restartOrder(diff(after, assign({ statefulSetName: 'w', replicas: 3, jobs, previous: after }).assignment));
    expect(down.map((s) => s.worker)).not.toContain('w-3');
    for (const step of down) expect(step.waitFor).not.toContain('w-3');
  });

  it('every changed worker appears once, and each honoured wait points to an earlier step', () => {
    const arb = fc.record({
      jobs: fc.uniqueArray(fc.string({ minLength: 1, maxLength: 5 }), { maxLength: 60 }),
      from: fc.integer({ min: 1, max: 12 }),
      to: fc.integer({ min: 1, max: 12 }),
      drop: fc.nat({ max: 10 }),
    });
    fc.assert(
      fc.property(arb, ({ jobs, from, to, drop }) => {
        const before = assign({ statefulSetName: 'w', replicas: from, jobs }).assignment;
        const after = assign({ statefulSetName: 'w', replicas: to, jobs: jobs.slice(drop), previous: before }).assignment;
        const change = diff(before, after);
        const steps = restartOrder(change);
        expect(steps.map((s) => s.worker).sort()).toEqual([...change.changedWorkers].sort());
        const seen = new Set<string>();
        for (const step of steps) {
          for (const w of step.waitFor) expect(seen.has(w)).toBe(true);
          seen.add(step.worker);
        }
      }),
      { numRuns: 200 },
    );
  });
});
