// Shrinking a failing schedule: delta debugging over its user actions and
// faults (the seed, and so the background randomness, stays), keeping a
// smaller schedule while the same invariant still fails.
import type { Shortcuts } from '../../lib/reconcilers/shortcuts.js';
import type { Schedule } from './schedule.js';
import { run } from './world.js';

/** `shortcuts`: those switched off in every run (a schedule that fails only without them). */
export async function shrink(schedule: Schedule, invariant: string, budgetMs = 120_000, shortcuts: Partial<Shortcuts> = {}): Promise<Schedule> {
  const started = Date.now();
  const fails = async (s: Schedule) => (await run(s, { shortcuts })).violations.some((v) => v.invariant === invariant);
  let current = schedule;
  let chunks = 2;
  while (current.actions.length > 0 && Date.now() - started < budgetMs) {
    const size = Math.ceil(current.actions.length / chunks);
    let reduced = false;
    for (let i = 0; i < current.actions.length && Date.now() - started < budgetMs; i += size) {
      const candidate = { ...current, actions: [...current.actions.slice(0, i), ...current.actions.slice(i + size)] };
      if (await fails(candidate)) {
        current = candidate;
        reduced = true;
        break;
      }
    }
    if (reduced) chunks = Math.max(2, chunks - 1);
    else if (size === 1) break;
    else chunks = Math.min(current.actions.length, chunks * 2);
  }
  // The quiet end can start right after the last action that remains.
  const last = current.actions.at(-1)?.at ?? 60_000;
  const trimmed = { ...current, activeMs: Math.min(current.activeMs, last + 60_000) };
  return (await fails(trimmed)) ? trimmed : current;
}
