// The order in which changed workers restart (restart policy Restart).
//
// Restarts break first: a worker that gains a job waits for the workers losing
// it (they restart first and come back without it), so a job never runs twice
// (at-most-once). The other order cannot hold its promise: a restart stops
// every job of the worker, the ones it keeps included (the API refuses Restart
// with MakeBeforeBreak, lib/api/schema.ts restartBreaksFirst).
//
// The waits form a graph that can have cycles (two workers swapping jobs).
// Kahn's algorithm emits ready workers in ordinal order; when only cycles are
// left, the lowest pending ordinal starts without waiting for the
// pending members (they restart after it). Deterministic, and documented in
// the step: `waitFor` lists only waits that are actually honoured.
//
// Waits survive a newer version: steps still pending from an earlier change
// (`carried`) join the graph with the waits they had, so a gainer that was
// waiting for its loser keeps waiting even when the next change does not
// touch it.
import { compareWorkers } from '../assignment/workers.js';
import type { AssignmentDiff } from './diff.js';


export interface RestartStep {
  readonly worker: string;
  /** Workers that must run their new share (acknowledged, or restarted and Ready) before this one restarts. */
  readonly waitFor: readonly string[];
}

export function restartOrder(
  change: AssignmentDiff,
  order: (a: string, b: string) => number = compareWorkers,
  carried: ReadonlyMap<string, readonly string[]> = new Map(),
): RestartStep[] {
  const candidates = new Set([...change.changedWorkers, ...carried.keys()]);
  // waits.get(w) = workers w must wait for.
  const waits = new Map<string, Set<string>>([...candidates].map((w) => [w, new Set<string>(carried.get(w) ?? [])]));
  for (const { from, to } of change.moves) {
    if (from === null || to === null) continue;
    // Only restarted workers wait or are waited for: a new worker's pod is created after the
    // losers' restarts (lib/decisions/scale.ts), a removed one is simply gone.
    if (candidates.has(to) && candidates.has(from)) waits.get(to)!.add(from);
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
