// npm start's live view: one line per reconcile or handoff step that changed
// something, the workers' shares as a small table when they change, nothing
// for the many reconciles that find everything in place. Pure: the shell
// (dev/start.ts) turns each broker delivery into a `Step`, reads the Swarm's
// view (who owns what, what the last change moved) and prints what this returns.
import type { SwarmView } from '../lib/introspection/view.js';
import type { Move } from '../lib/plan/index.js';

/** One function's answer to one delivered event, as plain data. */
export interface Step {
  /** Wall-clock time, `HH:MM:SS`. */
  readonly time: string;
  readonly fn: string;
  /** What was delivered, e.g. `StatefulSet swarm-worker update`. */
  readonly trigger: string;
  readonly status: number | 'error';
  readonly attempt: number;
  /** Per Swarm, from the function's summary (or, for a reply, what it names). */
  readonly swarms: readonly SwarmResult[];
  /** The answer's error, when not 2xx. */
  readonly error?: string;
}

export interface SwarmResult {
  /** `namespace/name`. */
  readonly swarm: string;
  /** assign: changed | unchanged | blocked | invalid | gone | notified; restart: restarting | waiting | idle | blocked | gone. */
  readonly result: string;
  readonly reason?: string;
  readonly message?: string;
  readonly restarted?: readonly string[];
  readonly outstanding?: readonly string[];
  readonly waiting?: string;
}

/** What the view remembers per Swarm, to print changes only. */
export interface SwarmMemory {
  readonly version?: number;
  readonly shares?: string;
  /** The problem last printed (blocked, invalid, gone). */
  readonly problem?: string;
  /** What the handoff waited for, last printed. */
  readonly waiting?: string;
  readonly outstanding?: number;
}

export type ViewState = Readonly<Record<string, SwarmMemory>>;

const FN_WIDTH = 7;
const SHARE_WIDTH = 60;

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

/** `5 jobs moved (a → c: 3, b → c: 2)`, plus jobs added and removed. */
export function describeMoves(moves: readonly Move[]): string {
  const pairs = new Map<string, number>();
  let added = 0;
  let removed = 0;
  for (const m of moves) {
    if (m.from === null) added += 1;
    else if (m.to === null) removed += 1;
    else pairs.set(`${m.from} → ${m.to}`, (pairs.get(`${m.from} → ${m.to}`) ?? 0) + 1);
  }
  const moved = [...pairs.values()].reduce((a, b) => a + b, 0);
  const parts = [
    ...(moved ? [`moved ${plural(moved, 'job')} (${[...pairs].map(([pair, n]) => `${pair}: ${n}`).join(', ')})`] : []),
    ...(added ? [`${plural(added, 'new job')}`] : []),
    ...(removed ? [`${plural(removed, 'job')} removed`] : []),
  ];
  return parts.length ? parts.join('  ') : 'no job moved';
}

/** Jobs a worker gains and loses in a change: `gains 9`, `loses 5`, `gains 1, loses 2`. */
export function gainsAndLosses(worker: string, moves: readonly Move[]): string {
  const gains = moves.filter((m) => m.to === worker).length;
  const loses = moves.filter((m) => m.from === worker).length;
  return [...(gains ? [`gains ${gains}`] : []), ...(loses ? [`loses ${loses}`] : [])].join(', ');
}

/** The workers' shares, one row each, indented under the time column. */
export function sharesTable(view: SwarmView): string[] {
  const indent = ' '.repeat(9);
  const width = Math.max('worker'.length, ...view.workers.map((w) => w.name.length));
  const share = (jobs: readonly string[]) => {
    const text = jobs.join(' ');
    return text.length <= SHARE_WIDTH ? text : `${text.slice(0, SHARE_WIDTH - 1).replace(/\s*\S*$/, '')} …`;
  };
  return [
    `${indent}${'worker'.padEnd(width)}  ver  jobs  share`,
    ...view.workers.map((w) => `${indent}${w.name.padEnd(width)}  ${`v${w.version}`.padEnd(3)}  ${String(w.jobs.length).padStart(4)}  ${share(w.jobs)}`),
  ];
}

const sharesKey = (view: SwarmView) => JSON.stringify(view.workers.map((w) => [w.name, w.version, w.jobs]));

/**
 * The lines one step adds to the live view, and what to remember. `views` holds
 * each Swarm's view read after the step (absent when it could not be read).
 */
export function liveView(state: ViewState, step: Step, views: Readonly<Record<string, SwarmView>>): { state: ViewState; lines: string[] } {
  const lines: string[] = [];
  const next: Record<string, SwarmMemory> = { ...state };
  const line = (swarm: string, text: string) => lines.push(`${step.time} ${step.fn.padEnd(FN_WIDTH)} ${swarm}  ${text}`);

  if (step.status === 'error' || step.status >= 300) {
    const answer = step.status === 'error' ? 'no answer' : String(step.status);
    lines.push(`${step.time} ${step.fn.padEnd(FN_WIDTH)} ${step.trigger} → ${answer} (attempt ${step.attempt})${step.error ? `: ${step.error}` : ''}`);
    return { state, lines };
  }

  for (const result of step.swarms) {
    const memory = next[result.swarm] ?? {};
    const view = views[result.swarm];
    // A problem (blocked, invalid, gone) is printed once, until it changes.
    if (['blocked', 'invalid', 'gone'].includes(result.result)) {
      const detail = result.message || result.waiting;
      const problem = `${result.result}${result.reason ? `: ${result.reason}` : ''}${detail ? ` — ${detail}` : ''}`;
      if (problem !== memory.problem) line(result.swarm, problem);
      next[result.swarm] = { ...memory, problem };
      continue;
    }
    let updated: SwarmMemory = { ...memory, problem: undefined };

    if (step.fn === 'assign' && view && view.version !== memory.version) {
      const moves = view.lastChange?.version === view.version ? `  ${describeMoves(view.lastChange.moves)}` : '';
      line(result.swarm, `v${view.version}  ${plural(view.workers.length, 'worker')}${moves}`);
      updated = { ...updated, version: view.version };
    }

    if (step.fn === 'restart') {
      const moves = view?.lastChange?.version === view?.version ? (view?.lastChange?.moves ?? []) : [];
      for (const worker of result.restarted ?? []) {
        const change = gainsAndLosses(worker, moves);
        line(result.swarm, `${worker} restarted${change ? ` (${change})` : ''}`);
      }
      const outstanding = result.outstanding ?? [];
      if (result.result === 'waiting' && result.waiting && result.waiting !== memory.waiting) {
        line(result.swarm, `waiting: ${result.waiting}`);
      }
      updated = { ...updated, waiting: result.waiting || undefined };
      // Done when nothing is left to restart after restarts were outstanding or made (one reconcile may do all).
      if (outstanding.length === 0 && ((memory.outstanding ?? 0) > 0 || (result.restarted ?? []).length > 0)) {
        line(result.swarm, `handoff done${view ? `: every worker runs its v${view.version} share` : ''}`);
      }
      updated = { ...updated, outstanding: outstanding.length };
    }

    if (view && sharesKey(view) !== memory.shares && view.version === updated.version) {
      lines.push(...sharesTable(view));
      updated = { ...updated, shares: sharesKey(view) };
    }
    next[result.swarm] = updated;
  }
  return { state: next, lines };
}

/** The parts of a broker delivery (dev/broker) a step is made of. */
export interface DeliveryLike {
  readonly subscriber: string;
  readonly event: { readonly type: string; readonly data?: unknown };
  readonly status: number | 'error';
  readonly attempt: number;
  readonly reply?: { readonly type: string; readonly data?: unknown };
  readonly body?: unknown;
}

/** `StatefulSet swarm-worker update` for an ApiServerSource event, the type's last part otherwise. */
export function describeEvent(event: DeliveryLike['event']): string {
  const data = (event.data ?? {}) as { kind?: string; metadata?: { name?: string }; version?: number };
  if (event.type.startsWith('dev.knative.apiserver.')) return `${data.kind ?? '?'} ${data.metadata?.name ?? '?'} ${event.type.split('.').pop()}`;
  const short = event.type.split('.').slice(-2).join('.');
  return data.version !== undefined ? `${short} v${data.version}` : short;
}

export function stepFromDelivery(d: DeliveryLike, time: string): Step {
  const fn = d.subscriber.replace(/^swarm-/, '');
  const body = (d.body ?? {}) as { swarms?: unknown; error?: unknown };
  const swarms: SwarmResult[] = Array.isArray(body.swarms) ? (body.swarms as SwarmResult[]) : [];
  // A reply carries no summary; it names the Swarm whose restarts are due.
  const replied = d.reply?.data as { swarm?: { namespace?: string; name?: string } } | undefined;
  if (replied?.swarm?.namespace && replied.swarm.name) swarms.push({ swarm: `${replied.swarm.namespace}/${replied.swarm.name}`, result: 'notified' });
  const error = typeof body.error === 'string' ? body.error : typeof d.body === 'string' ? d.body : undefined;
  return {
    time,
    fn,
    trigger: describeEvent(d.event),
    status: d.status,
    attempt: d.attempt,
    swarms,
    ...(error ? { error } : {}),
  };
}
