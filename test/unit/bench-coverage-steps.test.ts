import { describe, expect, it } from 'vitest';
import { assignmentDefects, podNames, runsAssignment, scalingTotal, sideBySideTable, stepsTable, type StepResult } from '../../bench/coverage-steps.js';
import { chunkingCoverage } from '../../bench/peers/chunking.js';
import { seedStreams } from '../support/fixtures.js';

const pods2 = podNames(2);

describe('bench:coverage: when a step is over', () => {
  const assignment = { 'swarm-worker-0': ['a', 'b'], 'swarm-worker-1': ['c'] };

  it('names the pods of a replica count', () => {
    expect(podNames(3)).toEqual(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
    expect(podNames(0)).toEqual([]);
  });

  it('is over when each pod runs its share, in any order, and nothing else runs', () => {
    expect(runsAssignment({ 'swarm-worker-0': ['b', 'a'], 'swarm-worker-1': ['c'] }, assignment, pods2)).toBe(true);
    expect(runsAssignment({ 'swarm-worker-0': ['a'], 'swarm-worker-1': ['c'] }, assignment, pods2)).toBe(false);
    expect(runsAssignment({ 'swarm-worker-0': ['a', 'b'], 'swarm-worker-1': ['c', 'd'] }, assignment, pods2)).toBe(false);
    // A departed pod still running something.
    expect(runsAssignment({ ...assignment, 'swarm-worker-2': ['a'] }, assignment, pods2)).toBe(false);
  });

  it('is not over while two incarnations of one pod both run its jobs', () => {
    expect(runsAssignment({ 'swarm-worker-0': ['a', 'a', 'b', 'b'], 'swarm-worker-1': ['c'] }, assignment, pods2)).toBe(false);
  });

  it('needs the assignment to name exactly the new replica count, and a pod with no jobs to run none', () => {
    expect(runsAssignment(assignment, assignment, podNames(3))).toBe(false);
    const withIdle = { ...assignment, 'swarm-worker-2': [] };
    expect(runsAssignment(assignment, withIdle, podNames(3))).toBe(true);
    expect(runsAssignment({ ...assignment, 'swarm-worker-2': [] }, withIdle, podNames(3))).toBe(true);
  });

  it("takes a system's own defects as its end state: a job assigned twice is run twice", () => {
    const doubled = { 'swarm-worker-0': ['a', 'b'], 'swarm-worker-1': ['b', 'c'] };
    expect(runsAssignment({ 'swarm-worker-0': ['a', 'b'], 'swarm-worker-1': ['b', 'c'] }, doubled, pods2)).toBe(true);
  });
});

describe('bench:coverage: defects of an assignment at rest', () => {
  it('counts jobs on no worker and jobs on several', () => {
    expect(assignmentDefects({ p0: ['a', 'b'], p1: ['b'] }, ['a', 'b', 'c'])).toEqual({ onNone: ['c'], onSeveral: ['b'] });
    expect(assignmentDefects({}, ['a'])).toEqual({ onNone: ['a'], onSeveral: [] });
  });

  it("finds the original chunking's defects on the seed streams, as bench/peers/chunking.ts counts them", () => {
    // The original's slices, as its state.go cuts them: worker i from i·size_i to (i+1)·size_i.
    const original = (n: number) =>
      Object.fromEntries(
        Array.from({ length: n }, (_, i) => {
          const size = Math.floor(seedStreams.length / n) + (i < seedStreams.length % n ? 1 : 0);
          return [`swarm-worker-${i}`, seedStreams.slice(i * size, (i + 1) * size)];
        }),
      );
    for (const n of [2, 3, 4, 5]) {
      const { holders } = chunkingCoverage(seedStreams.length, n);
      const defects = assignmentDefects(original(n), seedStreams);
      expect(defects.onNone).toEqual(seedStreams.filter((_, k) => holders[k] === 0));
      expect(defects.onSeveral).toEqual(seedStreams.filter((_, k) => holders[k]! > 1));
    }
    expect(assignmentDefects(original(2), seedStreams).onNone).toHaveLength(1);
    expect(assignmentDefects(original(4), seedStreams).onSeveral).toHaveLength(3);
  });
});

const step = (name: string, over: Partial<StepResult> = {}): StepResult => ({
  step: name,
  kind: name.startsWith('start') ? 'start' : 'resize',
  replicas: 3,
  version: 2,
  configWrittenS: 0.5,
  statusConvergedS: 10,
  workersConvergedS: 12.25,
  uncoveredJobSeconds: 4,
  jobsUncovered: 2,
  longestGapS: 1.5,
  duplicateJobSeconds: 1,
  jobsDuplicated: 1,
  podsRestarted: 2,
  podsRemoved: 0,
  assignedToNone: 0,
  assignedToSeveral: 0,
  anomalies: 0,
  misses: 0,
  ...over,
});

describe('bench:coverage: tables', () => {
  const swarm = [step('start at 2', { uncoveredJobSeconds: 50 }), step('2→3'), step('3→4', { uncoveredJobSeconds: 0, podsRestarted: 3 })];
  const original = [step('start at 2', { statusConvergedS: undefined }), step('2→3', { uncoveredJobSeconds: 30, duplicateJobSeconds: 7.25, workersConvergedS: undefined })];

  it('sums the scaling steps, leaving out the start and a crash', () => {
    expect(scalingTotal(swarm, 'uncoveredJobSeconds')).toBe(4);
    expect(scalingTotal([...swarm, step('a pod crash-looping', { kind: 'crash', uncoveredJobSeconds: 90 })], 'uncoveredJobSeconds')).toBe(4);
    expect(scalingTotal(swarm, 'podsRestarted')).toBe(5);
    expect(scalingTotal([], 'duplicateJobSeconds')).toBe(0);
  });

  it('renders one row per step, with the status column only where a system has a status', () => {
    const withStatus = stepsTable(swarm, { status: true });
    expect(withStatus).toHaveLength(2 + swarm.length);
    expect(withStatus[0]).toContain('status converged (s)');
    expect(withStatus[3]).toBe('| 2→3 | 2 | 0.5 | 10.0 | 12.3 | 4.0 | 2 | 1.5 | 1.0 | 1 | 2 | 0 | 0 / 0 |');
    const without = stepsTable(original, { status: false });
    expect(without[0]).not.toContain('status converged');
    expect(without[3]).toBe('| 2→3 | 2 | 0.5 | — | 30.0 | 2 | 1.5 | 7.3 | 1 | 2 | 0 | 0 / 0 |');
    // Every row has as many cells as the header.
    const cells = (row: string) => row.split('|').length;
    for (const table of [withStatus, without]) for (const row of table) expect(cells(row)).toBe(cells(table[0]!));
  });

  it('puts two runs side by side per step, a step one of them lacks as —, and totals the scaling steps', () => {
    const table = sideBySideTable(['Swarm', 'original'], [swarm, original]);
    expect(table[0]).toBe('| step | workers converged (s): Swarm | original | uncovered job-s: Swarm | original | duplicate job-s: Swarm | original | pods restarted: Swarm | original |');
    expect(table[3]).toBe('| 2→3 | 12.3 | — | 4.0 | 30.0 | 1.0 | 7.3 | 2 | 2 |');
    expect(table[4]).toBe('| 3→4 | 12.3 | — | 0.0 | — | 1.0 | — | 3 | — |');
    expect(table.at(-1)).toBe('| scaling steps (after the start) | | | 4.0 | 30.0 | 2.0 | 7.3 | 5 | 2 |');
  });

  it('puts a crash after the totals of the resizes', () => {
    const crash = (uncovered: number) => step('a pod crash-looping', { kind: 'crash', uncoveredJobSeconds: uncovered, podsRestarted: 0 });
    const table = sideBySideTable(['Swarm', 'original'], [[...swarm, crash(20)], [...original, crash(95)]]);
    expect(table.at(-2)).toBe('| scaling steps (after the start) | | | 4.0 | 30.0 | 2.0 | 7.3 | 5 | 2 |');
    expect(table.at(-1)).toBe('| a pod crash-looping | 12.3 | 12.3 | 20.0 | 95.0 | 1.0 | 1.0 | 0 | 0 |');
  });
});
