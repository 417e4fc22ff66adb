// Who owns what, as plain data (for `GET /swarms/:namespace/:name`) and as a
// small self-contained HTML page. Pure: the caller reads the Swarm, its worker
// ConfigMap and the restart queue; nothing here talks to a cluster.
import type { Phase } from '../api/types.js';
import { compareNames } from '../assignment/jobs.js';
import { compareWorkers } from '../assignment/workers.js';
import { diff, type Move } from '../plan/diff.js';

/**
 * The parsed worker config (ConfigMap key `config.yml`), structurally: what
 * lib/workerconfig produces, reduced to what this view reads.
 */
export interface WorkerConfigLike {
  readonly version: number;
  readonly workloads: Readonly<Record<string, { readonly jobs: readonly string[]; readonly version: number }>>;
}

/** The parts of a Swarm this view reads. */
export interface SwarmLike {
  readonly metadata: { readonly namespace: string; readonly name: string };
  readonly status?: { readonly phase?: Phase; readonly version?: number };
}

/** Worker → jobs before the last change, to tell what moved. */
type OwnersBefore = Readonly<Record<string, readonly string[]>>;

interface SwarmViewInput {
  readonly swarm: SwarmLike;
  /** Absent before the first assignment was written. */
  readonly config?: WorkerConfigLike;
  /** Pods whose restart is decided but not yet done. */
  readonly pendingRestarts: readonly string[];
  /**
   * The config version the last change produced, with either the owners just
   * before it (moves are then computed against `config`) or its moves as recorded.
   */
  readonly lastChange?: LastChangeInput;
}

export type LastChangeInput =
  | { readonly version: number; readonly before: OwnersBefore }
  | { readonly version: number; readonly moves: readonly Move[] };

export interface WorkerView {
  readonly name: string;
  readonly version: number;
  readonly jobs: readonly string[];
  readonly restartPending: boolean;
}

export interface SwarmView {
  readonly namespace: string;
  readonly name: string;
  readonly version: number;
  readonly phase: Phase;
  readonly workers: readonly WorkerView[];
  readonly pendingRestarts: readonly string[];
  readonly lastChange?: { readonly version: number; readonly moves: readonly Move[] };
}


function lastChangeView(lastChange: LastChangeInput, current: OwnersBefore): NonNullable<SwarmView['lastChange']> {
  const moves =
    'moves' in lastChange
      ? [...lastChange.moves].sort((a, b) => compareNames(a.job, b.job))
      : diff(lastChange.before, current).moves;
  return { version: lastChange.version, moves };
}

export function swarmView(input: SwarmViewInput): SwarmView {
  const { swarm, config } = input;
  const pending = new Set(input.pendingRestarts);
  const workloads = config?.workloads ?? {};
  const workers = Object.keys(workloads)
    .sort(compareWorkers)
    .map((name): WorkerView => {
      const workload = workloads[name]!;
      return { name, version: workload.version, jobs: [...workload.jobs].sort(compareNames), restartPending: pending.has(name) };
    });
  const current = Object.fromEntries(workers.map((worker) => [worker.name, worker.jobs]));
  return {
    namespace: swarm.metadata.namespace,
    name: swarm.metadata.name,
    version: config?.version ?? swarm.status?.version ?? 0,
    phase: swarm.status?.phase ?? 'Pending',
    workers,
    pendingRestarts: [...pending].sort(compareWorkers),
    ...(input.lastChange ? { lastChange: lastChangeView(input.lastChange, current) } : {}),
  };
}

// ---------------------------------------------------------------------------
// HTML

const HTML_ESCAPES: Readonly<Record<string, string>> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

function escapeHtml(text: string | number): string {
  return String(text).replace(/[&<>"']/g, (char) => HTML_ESCAPES[char]!);
}

const STYLE = `
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5rem; color: #1b1f24; }
h1 { font-size: 1.3rem; margin: 0 0 .25rem; }
.meta { color: #57606a; margin-bottom: 1rem; }
table { border-collapse: collapse; margin-bottom: 1.5rem; }
th, td { border: 1px solid #d0d7de; padding: .3rem .6rem; text-align: left; vertical-align: top; }
th { background: #f6f8fa; }
caption { text-align: left; font-weight: 600; padding-bottom: .3rem; }
ul.jobs { list-style: none; margin: 0; padding: 0; display: flex; flex-wrap: wrap; gap: .25rem; }
ul.jobs li { background: #eef1f4; border-radius: 3px; padding: 0 .35rem; }
ul.jobs li.moved { background: #fff3b0; font-weight: 600; }
.pending { color: #9a6700; font-weight: 600; }
.none { color: #8c959f; }
`;

function jobList(jobs: readonly string[], movedIn: ReadonlySet<string>): string {
  if (jobs.length === 0) return '<span class="none">no jobs</span>';
  const items = jobs.map((job) =>
    movedIn.has(job)
      ? `<li class="moved" data-job="${escapeHtml(job)}" title="moved here in the last change">${escapeHtml(job)}</li>`
      : `<li data-job="${escapeHtml(job)}">${escapeHtml(job)}</li>`,
  );
  return `<ul class="jobs">${items.join('')}</ul>`;
}

function ownersTable(view: SwarmView): string {
  const movedIn = new Map<string, Set<string>>();
  for (const move of view.lastChange?.moves ?? []) {
    if (move.to === null) continue;
    const jobs = movedIn.get(move.to) ?? new Set<string>();
    jobs.add(move.job);
    movedIn.set(move.to, jobs);
  }
  if (view.workers.length === 0) return '<p class="none" id="owners">No assignment written yet.</p>';
  const rows = view.workers.map(
    (worker) =>
      `<tr data-worker="${escapeHtml(worker.name)}"><td>${escapeHtml(worker.name)}</td><td>${escapeHtml(worker.version)}</td>` +
      `<td>${jobList(worker.jobs, movedIn.get(worker.name) ?? new Set())}</td>` +
      `<td>${worker.restartPending ? '<span class="pending">pending</span>' : ''}</td></tr>`,
  );
  return (
    '<table id="owners"><caption>Who owns what</caption>' +
    '<thead><tr><th>Worker</th><th>Version</th><th>Jobs</th><th>Restart</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

function movesTable(lastChange: NonNullable<SwarmView['lastChange']>): string {
  if (lastChange.moves.length === 0) {
    return `<p id="moves">Last change (version ${escapeHtml(lastChange.version)}) moved no job.</p>`;
  }
  const cell = (worker: string | null) => (worker === null ? '<span class="none">—</span>' : escapeHtml(worker));
  const rows = lastChange.moves.map(
    (move) => `<tr data-job="${escapeHtml(move.job)}"><td>${escapeHtml(move.job)}</td><td>${cell(move.from)}</td><td>${cell(move.to)}</td></tr>`,
  );
  return (
    `<table id="moves"><caption>Last change (version ${escapeHtml(lastChange.version)})</caption>` +
    '<thead><tr><th>Job</th><th>From</th><th>To</th></tr></thead>' +
    `<tbody>${rows.join('')}</tbody></table>`
  );
}

/** A self-contained page (inline style, no scripts, no external assets); every value escaped. */
export function renderHtml(view: SwarmView): string {
  const title = `Swarm ${view.namespace}/${view.name}`;
  const pending = view.pendingRestarts.length
    ? `restarts pending: ${view.pendingRestarts.map(escapeHtml).join(', ')}`
    : 'no restarts pending';
  return [
    '<!doctype html>',
    '<html lang="en"><head><meta charset="utf-8">',
    `<title>${escapeHtml(title)}</title>`,
    `<style>${STYLE}</style></head><body>`,
    `<h1>${escapeHtml(title)}</h1>`,
    `<p class="meta">phase <strong id="phase">${escapeHtml(view.phase)}</strong> · version <strong id="version">${escapeHtml(view.version)}</strong> · ${pending}</p>`,
    ownersTable(view),
    view.lastChange ? movesTable(view.lastChange) : '',
    '</body></html>',
    '',
  ].join('\n');
}
