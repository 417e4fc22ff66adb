// npm start's live view. The functions run in pods behind the real Broker, so
// the view prints what it observes, polled — the Swarm's status, the config
// version and shares it publishes (what the last change moved, the workers'
// shares as a small table), and how many pods each function has (scale to zero
// and the activator's wake-up show there), and for each config version the
// link to the trace that made it in the trace viewer, once its spans are in.
// A line only when something changed.
// Pure: dev/start.ts reads, this decides what to print.
import type { Swarm } from '../lib/api/types.js';
import type { SwarmView } from '../lib/introspection/view.js';
import type { Move } from '../lib/plan/index.js';

export interface Observed {
  /** Wall-clock time, `HH:MM:SS`. */
  readonly time: string;
  /** `namespace/name`. */
  readonly swarm: string;
  readonly status?: Swarm['status'];
  readonly view?: SwarmView;
  /** Knative Service name → its pods that are not terminating (each revision's). */
  readonly functionPods: Readonly<Record<string, number>>;
  /** Config version → the trace viewer's page of the trace that made it (dev/change-traces.ts). */
  readonly traceLinks?: ReadonlyMap<number, string>;
}

export interface ObservedMemory {
  readonly status?: string;
  readonly version?: number;
  readonly pods?: string;
  /** Versions whose trace link is printed. */
  readonly linked?: readonly number[];
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
const SHARE_WIDTH = 60;

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


/** `Running v7  3/3 ready  0 uncovered  Ready=True (Converged)`. */
export function statusLine(status: Swarm['status']): string {
  if (!status) return 'no status yet';
  const condition = (type: string) => status.conditions?.find((c) => c.type === type);
  const ready = condition('Ready');
  const degraded = condition('Degraded');
  return [
    `${status.phase ?? 'Pending'}${status.version === undefined ? '' : ` v${status.version}`}`,
    `${status.readyReplicas ?? 0}/${status.replicas ?? 0} ready`,
    `${status.uncoveredJobs ?? 0} uncovered`,
    ...(ready ? [`Ready=${ready.status}${ready.reason ? ` (${ready.reason})` : ''}`] : []),
    ...(degraded?.status === 'True' ? [`Degraded: ${degraded.reason ?? ''}${degraded.message ? ` — ${degraded.message}` : ''}`] : []),
  ].join('  ');
}

/** The lines one observation adds, and what to remember. */
export function observedView(memory: ObservedMemory, o: Observed): { memory: ObservedMemory; lines: string[] } {
  const lines: string[] = [];
  const line = (who: string, text: string) => lines.push(`${o.time} ${who.padEnd(7)} ${text}`);

  const pods = Object.entries(o.functionPods)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([fn, n]) => `${fn} ${plural(n, 'pod')}${n === 0 ? ' (scaled to zero)' : ''}`)
    .join('  ');
  if (pods && pods !== memory.pods) line('knative', pods);

  const status = statusLine(o.status);
  if (status !== memory.status) line('status', `${o.swarm}  ${status}`);

  const view = o.view;
  // Version 0: no config written yet (nothing to show until the first).
  if (view && view.version > 0 && view.version !== memory.version) {
    const moves = view.lastChange?.version === view.version ? `  ${describeMoves(view.lastChange.moves)}` : '';
    line('config', `${o.swarm}  v${view.version}  ${plural(view.workers.length, 'worker')}${moves}`);
    lines.push(...sharesTable(view));
  }
  // The spans reach the viewer a moment after the config: a link comes when its trace does.
  const linked = new Set(memory.linked);
  for (const [traced, link] of [...(o.traceLinks ?? [])].sort(([a], [b]) => a - b)) {
    if (linked.has(traced)) continue;
    linked.add(traced);
    line('trace', `${o.swarm}  v${traced}  ${link}`);
  }
  // Unread this time (the config could not be read): the last version printed stays.
  const version = view?.version ?? memory.version;
  return { memory: { pods, status, ...(version === undefined ? {} : { version }), ...(linked.size ? { linked: [...linked] } : {}) }, lines };
}
