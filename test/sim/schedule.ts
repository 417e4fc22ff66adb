// One general generator: a seed draws the configuration (a combination the API
// accepts) and a schedule of user actions and faults, at default probabilities.
// Nothing here aims at a known defect. A schedule is plain data: the regression
// corpus keeps shrunk ones, replayable after the code changes.
import { Rng } from './rng.js';

export interface Options {
  pool: 'StatefulSet' | 'Deployment';
  policy: 'None' | 'Restart';
  handoff: 'MakeBeforeBreak' | 'BreakBeforeMake';
  /** swarm: spec.replicas is set (kubectl scale swm); user: the pool is scaled by hand. */
  scaler: 'swarm' | 'user';
  acknowledges: boolean;
  /** Instances per function (Knative max-scale). */
  instances: 1 | 2 | 3;
  podManagement: 'OrderedReady' | 'Parallel';
  jobs: number;
  /** Jobs with a weight other than 1, and dedicated jobs (asking for a worker of their own). */
  weighted: number;
  dedicated: number;
  replicas: number;
  maxUnavailable: number;
  /** spec.failover (docs/failure-detection.md): acknowledging workers heartbeat and fence (older schedules: off). */
  failover?: boolean;
}

export type Action =
  | { at: number; kind: 'scale'; target: 'swarm' | 'pool'; to: number }
  /** readd: put back that many of the jobs removed last, under their own names (an edit reverted). */
  | { at: number; kind: 'jobs'; add: number; remove: number; readd?: number }
  | { at: number; kind: 'handoff'; value: Options['handoff'] }
  | { at: number; kind: 'policy'; value: Options['policy'] }
  | { at: number; kind: 'delete-pod'; pick: number }
  | { at: number; kind: 'rollout-restart' }
  | { at: number; kind: 'ordinals-start'; value: number }
  | { at: number; kind: 'configmap'; how: 'delete' | 'garble' }
  | { at: number; kind: 'crash'; pick: number; loopMs: number }
  | { at: number; kind: 'kill-instance'; fn: 'assign' | 'restart'; pick: number }
  | { at: number; kind: 'api-errors'; forMs: number; p: number }
  | { at: number; kind: 'stale-reads'; forMs: number; p: number }
  | { at: number; kind: 'drop-events'; forMs: number; p: number }
  | { at: number; kind: 'delay-events'; forMs: number }
  | { at: number; kind: 'stuck-pods'; forMs: number; reason: 'ImagePullBackOff' | 'Unschedulable' }
  | { at: number; kind: 'slow-workers'; forMs: number }
  /** A function instance stalls (a GC pause, CPU throttled, a slow connection): some of its requests take 1-8 s. */
  | { at: number; kind: 'stall-requests'; forMs: number; p: number }
  /** Failover's faults on one worker process: SIGSTOP, its API traffic dropped, a hung job (test/sim/failover.ts). */
  | { at: number; kind: 'freeze' | 'partition' | 'hang'; pick: number; forMs: number };

export interface Schedule {
  seed: number;
  options: Options;
  /** User actions and faults, in time order. */
  actions: Action[];
  /** The last action or fault happens before this; the world is then quiet. */
  activeMs: number;
}

/** Combinations the API refuses, with the rule that refuses each. */
export const REFUSED: ReadonlyArray<{ when: (o: Options) => boolean; rule: string }> = [
  { when: (o) => o.pool === 'Deployment' && o.policy === 'Restart', rule: 'deploymentHotReloads: a Deployment pool needs restart.policy None' },
  { when: (o) => o.policy === 'Restart' && o.handoff === 'MakeBeforeBreak', rule: 'restartBreaksFirst: restart.policy Restart needs restart.handoff BreakBeforeMake' },
  { when: (o) => o.policy === 'Restart' && !!o.failover, rule: 'failoverHotReloads: spec.failover needs restart.policy None' },
];

export const accepted = (o: Options): boolean => !REFUSED.some((r) => r.when(o));

export function drawOptions(rng: Rng): Options {
  for (;;) {
    const o: Options = {
      pool: rng.chance(0.35) ? 'Deployment' : 'StatefulSet',
      policy: rng.chance(0.5) ? 'None' : 'Restart',
      handoff: rng.chance(0.5) ? 'MakeBeforeBreak' : 'BreakBeforeMake',
      scaler: rng.chance(0.5) ? 'swarm' : 'user',
      acknowledges: rng.chance(0.75),
      instances: rng.pick([1, 2, 3] as const),
      podManagement: rng.chance(0.5) ? 'Parallel' : 'OrderedReady',
      jobs: rng.int(3, 24),
      weighted: rng.chance(0.3) ? rng.int(1, 4) : 0,
      dedicated: rng.chance(0.3) ? rng.int(1, 2) : 0,
      replicas: rng.int(1, 4),
      maxUnavailable: rng.chance(0.7) ? 1 : 2,
    };
    if (accepted(o)) return o;
  }
}

/** A schedule of about 30-45 simulated minutes, 20+ user actions and 20+ faults. */
export function generate(seed: number): Schedule {
  const rng = new Rng(seed).fork('schedule');
  const options = drawOptions(rng);
  const activeMs = rng.seconds(30 * 60, 45 * 60);
  const actions: Action[] = [];
  const at = () => rng.int(60_000, activeMs);
  const users = rng.int(20, 28);
  for (let i = 0; i < users; i++) {
    const roll = rng.next();
    const t = at();
    if (roll < 0.3) actions.push({ at: t, kind: 'scale', target: options.scaler === 'swarm' ? (rng.chance(0.9) ? 'swarm' : 'pool') : 'pool', to: rng.int(1, 5) });
    else if (roll < 0.5) actions.push({ at: t, kind: 'jobs', add: rng.int(0, 4), remove: rng.int(0, 3) });
    else if (roll < 0.62) actions.push({ at: t, kind: 'delete-pod', pick: rng.int(0, 99) });
    else if (roll < 0.7) actions.push({ at: t, kind: 'rollout-restart' });
    else if (roll < 0.76) actions.push({ at: t, kind: 'handoff', value: rng.chance(0.5) ? 'MakeBeforeBreak' : 'BreakBeforeMake' });
    else if (roll < 0.8 && options.pool === 'StatefulSet') actions.push({ at: t, kind: 'policy', value: rng.chance(0.5) ? 'None' : 'Restart' });
    else if (roll < 0.86 && options.pool === 'StatefulSet') actions.push({ at: t, kind: 'ordinals-start', value: rng.int(0, 3) });
    else if (roll < 0.93) actions.push({ at: t, kind: 'configmap', how: rng.chance(0.5) ? 'delete' : 'garble' });
    else actions.push({ at: t, kind: 'jobs', add: rng.int(1, 3), remove: 0 });
  }
  const faults = rng.int(20, 28);
  for (let i = 0; i < faults; i++) {
    const roll = rng.next();
    const t = at();
    if (roll < 0.2) actions.push({ at: t, kind: 'crash', pick: rng.int(0, 99), loopMs: rng.chance(0.3) ? rng.seconds(20, 120) : 0 });
    else if (roll < 0.38) actions.push({ at: t, kind: 'kill-instance', fn: rng.chance(0.7) ? 'assign' : 'restart', pick: rng.int(0, 99) });
    else if (roll < 0.52) actions.push({ at: t, kind: 'api-errors', forMs: rng.seconds(2, 40), p: rng.pick([0.1, 0.3, 0.6]) });
    else if (roll < 0.66) actions.push({ at: t, kind: 'stale-reads', forMs: rng.seconds(2, 40), p: rng.pick([0.2, 0.5]) });
    else if (roll < 0.78) actions.push({ at: t, kind: 'drop-events', forMs: rng.seconds(2, 30), p: rng.pick([0.3, 0.8]) });
    else if (roll < 0.88) actions.push({ at: t, kind: 'delay-events', forMs: rng.seconds(5, 40) });
    else if (roll < 0.94) actions.push({ at: t, kind: 'stuck-pods', forMs: rng.seconds(10, 120), reason: rng.chance(0.5) ? 'ImagePullBackOff' : 'Unschedulable' });
    else actions.push({ at: t, kind: 'slow-workers', forMs: rng.seconds(10, 60) });
  }
  // Drawn from a stream of their own, so the actions above stay what they were before this fault existed.
  const stalls = new Rng(seed).fork('stalls');
  for (let i = stalls.int(1, 3); i > 0; i--) actions.push({ at: stalls.int(60_000, activeMs), kind: 'stall-requests', forMs: stalls.seconds(5, 40), p: stalls.pick([0.2, 0.5]) });
  // A job removed and soon put back under its own name (an edit reverted), from a stream of its own too.
  const back = new Rng(seed).fork('readd');
  for (let i = back.int(0, 3); i > 0; i--) {
    const t = back.int(60_000, activeMs);
    actions.push({ at: t, kind: 'jobs', add: 0, remove: back.int(1, 3) });
    actions.push({ at: Math.min(activeMs, t + back.seconds(1, 60)), kind: 'jobs', add: 0, remove: 0, readd: 3 });
  }
  // Failover and its faults from a fork of their own too.
  const fo = new Rng(seed).fork('failover');
  // The API refuses failover with restart-only workers (failoverHotReloads): drawn, then not taken.
  if (fo.chance(0.5) && options.policy === 'None') {
    options.failover = true;
    for (let i = fo.int(3, 8); i > 0; i--) {
      const kind = fo.pick(['freeze', 'partition', 'hang'] as const);
      actions.push({ at: fo.int(60_000, activeMs), kind, pick: fo.int(0, 99), forMs: fo.chance(0.5) ? fo.seconds(2, 20) : fo.seconds(20, 90) });
    }
  }
  actions.sort((a, b) => a.at - b.at);
  return { seed, options, actions, activeMs };
}
