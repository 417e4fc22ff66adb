// A Deployment pool on the real node, with Swarm on real Knative (deployed
// once per cluster: test/harness/swarm-on-knative.ts; events take the real
// path, ApiServerSource → Broker → Triggers → the functions' Knative Services;
// the test posts the resync ping to the Broker every 10 s, as the PingSource
// would every five minutes), measured by what the workers report: three
// hot-reloading reference workers (knative/samples/deployment.yaml) over the
// seed's 27 streams; the Swarm scales them 3 → 5 → 2, the Deployment rolls
// out a new pod template, a pod is deleted by hand, a pod crash-loops (the
// script: test/harness/pool-script.ts). After each step (the Swarm's status Running
// with every worker acknowledging, the Deployment rolled out): every job run
// exactly once, shares differ by at most one, moves (job starts in the step,
// by the workers' own reports) within the lower bound (a departed or
// replaced pod's share included; on a scale, summed over the assignments the
// Swarm wrote in the step, as the pods it assigns over appear one event at a
// time on the real path), and zero uncovered job-seconds (the
// coverage recorder, from the worker pods' logs; a crash leaves its jobs
// uncovered until a peer runs them, which must happen while the kubelet backs
// off its restart); and the Swarm's status,
// read at every poll, never Ready while a job had no acknowledged owner. The
// same script on a StatefulSet pool, side by side, is a benchmark: npm run
// bench:pools.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { lowerBound } from '../../lib/assignment/lower-bound.js';
import { startEndToEnd, type EndToEnd } from '../harness/end-to-end.js';
import { poolRun, SCRIPT, STEP_TIMEOUT, victimOf, type PoolRun, type StepOutcome } from '../harness/pool-script.js';
import { seedStreams } from '../support/fixtures.js';

const kubeconfig = inject('kubeconfig');
const NS = `deploy-pool-${process.pid}`;

let world: EndToEnd;
let run: PoolRun;

/**
 * Fewest moves from `before` to `replicas` workers given which pods left (the
 * assigner's lower bound, lib/assignment/lower-bound.ts): a departed pod's
 * share must move, so a replaced pod's share is part of it (it moves once, to
 * its replacement).
 */
function movesAllowed(before: Record<string, string[]>, after: Record<string, string[]>, replicas: number): number {
  const survivors = Object.keys(before).filter((pod) => pod in after);
  const departed = Object.keys(before).filter((pod) => !(pod in after));
  // Survivors as ordinals 0…, the departed beyond the new count: the bound's own model of who stays.
  const previous = Object.fromEntries([
    ...survivors.map((pod, i) => [`w-${i}`, before[pod]!] as const),
    ...departed.map((pod, i) => [`w-${replicas + i}`, before[pod]!] as const),
  ]);
  return lowerBound({ statefulSetName: 'w', replicas, jobs: seedStreams, previous })?.moves ?? 0;
}

/**
 * Fewest moves over the assignments the Swarm wrote in a step, each from the
 * one before (the first from what ran before the step): a Deployment's new
 * pods appear one by one on the real event path, and the Swarm assigns over
 * the pods there are (lib/assignment/workers.ts deploymentWorkers), so a
 * scale-up whose second new pod shows up after the first reassignment takes
 * two, each minimal. With one assignment: the direct bound.
 */
function movesAllowedInStep(s: StepOutcome): number {
  const chain = [s.before, ...s.assignments];
  return chain.slice(1).reduce((sum, next, i) => sum + movesAllowed(chain[i]!, next, Object.keys(next).length), 0);
}

const balanced = (s: StepOutcome) => ({ gaps: s.report.gaps, uncovered: s.report.totals.uncoveredSeconds, spread: s.spread <= 1 });

beforeAll(async () => {
  world = await startEndToEnd({ kubeconfig, namespace: NS, realNode: inject('realNode'), resyncEveryMs: 10_000 });
  run = poolRun(world, kubeconfig, NS, 'Deployment');
});

afterAll(async () => {
  await world?.stop();
});

describe('a Deployment pool of hot-reloading workers', () => {
  it('starts: 27 streams over 3 pods of a Deployment, each run exactly once', async () => {
    const byPod = await run.start();
    expect(Object.values(byPod).map((jobs) => jobs.length).sort()).toEqual([9, 9, 9]);
  }, STEP_TIMEOUT);

  it('kubectl scale swm 3 → 5: the new pods take their shares before the others drop them: zero uncovered job-seconds', async () => {
    const s = await run.step(SCRIPT.scaleUp);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.cost.moves, s.trace).toBeLessThanOrEqual(movesAllowedInStep(s));
  }, STEP_TIMEOUT);

  it('kubectl scale swm 5 → 2: the departing pods run their jobs until the survivors acknowledge them: zero uncovered job-seconds', async () => {
    const s = await run.step(SCRIPT.scaleDown);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.cost.moves, s.trace).toBeLessThanOrEqual(movesAllowedInStep(s));
  }, STEP_TIMEOUT);

  it('a rolling update (new pod template): each replaced pod hands its share to its replacement, every job moves once: zero uncovered job-seconds', async () => {
    const s = await run.step(SCRIPT.rollingUpdate);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    // Every pod replaced: each job moves exactly once, to its pod's replacement.
    expect(Object.keys(s.after).some((pod) => pod in s.before)).toBe(false);
    expect(s.cost.moves, s.trace).toBe(seedStreams.length);
    expect(s.cost.moves, s.trace).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  }, STEP_TIMEOUT);

  it('a pod deleted by hand: its replacement takes its share before it stops: zero uncovered job-seconds', async () => {
    const s = await run.step(SCRIPT.podDeleted);
    const victim = victimOf(s.before);
    expect(balanced(s)).toEqual({ gaps: [], uncovered: 0, spread: true });
    expect(s.after[victim]).toBeUndefined();
    expect(s.cost.moves, s.trace).toBe(s.before[victim]!.length);
    expect(s.cost.moves, s.trace).toBeLessThanOrEqual(movesAllowed(s.before, s.after, 2));
  }, STEP_TIMEOUT);

  it('a pod crash-looping: while the kubelet backs off its restart, its peer runs its share (the step fails otherwise); running again, it takes a share back', async () => {
    const s = await run.step(SCRIPT.crashLoop);
    const victim = victimOf(s.before);
    // Restarted in place, not replaced: the same pod runs a share again.
    expect({ replaced: s.cost.podsReplaced, back: (s.after[victim]?.length ?? 0) > 0, spread: s.spread <= 1 }).toEqual({ replaced: 0, back: true, spread: true });
  }, STEP_TIMEOUT);

  it('status was never Ready while a job had no acknowledged owner', () => {
    const readyUncovered = run.statuses.filter((st) => st?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (st.uncoveredJobs ?? 0) > 0);
    expect(run.statuses.length).toBeGreaterThan(3);
    expect(readyUncovered).toEqual([]);
  });
});
