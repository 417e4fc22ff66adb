// The order in which changed workers restart.
//
// Make-before-break: a worker that loses a job waits for the workers taking
// it over (they restart, or come up new, first), so the job is never without
// a consumer for longer than a hand-over. Break-before-make reverses every
// edge: losers stop first, so a job never runs twice (at-most-once).
//
// The waits form a graph that can have cycles (two workers swapping jobs).
// Kahn's algorithm emits ready workers in ordinal order; when only cycles are
// left, the lowest pending ordinal starts without waiting for the
// pending members (they restart after it). Deterministic, and documented in
// the step: `waitFor` lists only waits that are actually honoured.
//
// Waits survive a newer version: steps still pending from an earlier change
// (`carried`) join the graph with the waits they had, so a loser that was
// waiting for its gainer keeps waiting even when the next change does not
// touch it.
import { compareWorkers } from '../assignment/workers.js';
import { DEFAULTS } from '../api/schema.js';
import type { Handoff } from '../api/types.js';
import type { AssignmentDiff } from './diff.js';


export interface RestartStep {
  readonly worker: string;
  /** Workers that must run their new share (acknowledged, or restarted and Ready) before this one restarts. */
  readonly waitFor: readonly string[];
}

export function restartOrder(
  change: AssignmentDiff,
  handoff: Handoff = DEFAULTS.handoff,
  order: (a: string, b: string) => number = compareWorkers,
  carried: ReadonlyMap<string, readonly string[]> = new Map(),
): RestartStep[] {
  const candidates = new Set([...change.changedWorkers, ...carried.keys()]);
  const added = new Set(change.addedWorkers);
  // waits.get(w) = workers w must wait for.
  const waits = new Map<string, Set<string>>([...candidates].map((w) => [w, new Set<string>(carried.get(w) ?? [])]));
  for (const { from, to } of change.moves) {
    if (from === null || to === null) continue;
    const [waiter, first] = handoff === 'MakeBeforeBreak' ? [from, to] : [to, from];
    if (!candidates.has(waiter)) continue;
    // A new worker is created by the StatefulSet, so waiting for it is
    // waiting for it to acknowledge its share; a removed worker is simply gone.
    if (candidates.has(first) || (handoff === 'MakeBeforeBreak' && added.has(first))) waits.get(waiter)!.add(first);
  }

  const steps: RestartStep[] = [];
  const done = new Set<string>();
  const pending = [...candidates].sort(order);
  while (pending.length > 0) {
    let index = pending.findIndex((w) => [...waits.get(w)!].every((x) => done.has(x) || !candidates.has(x)));
    if (index < 0) index = 0; // only cycles left: break at the first pending worker
    const worker = pending.splice(index, 1)[0]!;
    const honoured = [...waits.get(worker)!].filter((x) => done.has(x) || !candidates.has(x)).sort(order);
    steps.push({ worker, waitFor: honoured });
    done.add(worker);
  }
  return steps;
}
