// `npm start -- --knative`'s live view. On real Knative the functions run in
// pods behind the real broker, so there is no delivery to report: the view
// prints what it observes instead, polled — the Swarm's status, the config
// version and shares it publishes, and how many pods each function has (scale
// to zero and the activator's wake-up show there). A line only when something
// changed. Pure: dev/start.ts reads, this decides what to print.
import type { Swarm } from '../lib/api/types.js';
import type { SwarmView } from '../lib/introspection/view.js';
import { describeMoves, sharesTable } from './live-view.js';

export interface Observed {
  /** Wall-clock time, `HH:MM:SS`. */
  readonly time: string;
  /** `namespace/name`. */
  readonly swarm: string;
  readonly status?: Swarm['status'];
  readonly view?: SwarmView;
  /** Knative Service name → its pods that are not terminating (each revision's). */
  readonly functionPods: Readonly<Record<string, number>>;
}

export interface ObservedMemory {
  readonly status?: string;
  readonly version?: number;
  readonly pods?: string;
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;

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
  // Unread this time (the config could not be read): the last version printed stays.
  const version = view?.version ?? memory.version;
  return { memory: { pods, status, ...(version === undefined ? {} : { version }) }, lines };
}
