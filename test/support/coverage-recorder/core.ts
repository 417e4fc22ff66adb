// Coverage from the workers' own reports: who ran each job, when, and how long
// each job had no running owner (uncovered) or two or more (duplicate).
// Pure: reports, source ends and a window in, numbers out. The shell that
// gathers the reports from pods' logs is recorder.ts.
//
// A *source* is one incarnation of a worker: a pod uid (a StatefulSet pod that
// is restarted comes back with the same name and a new uid), or any unique name
// for a local process. Within a source, a job runs from its job.started to its
// job.stopped. A source that ends without stopping its jobs (killed, crashed,
// force-deleted) ends them at its `SourceEnd`: the container's terminated time
// the kubelet reports in the pod status when there is one (exact), otherwise the
// time the pod was seen deleted (an upper bound: it may have died earlier, so a
// gap can be understated by up to the deletion's latency, never invented).
// A container that crashes and is restarted in place stays the same source: its
// jobs end at the crash (`Crash`, the terminated time the kubelet reports for
// the container it restarts), or at its last line if that came later (the
// kubelet's times are whole seconds).
import type { ReportEvent } from '../../../examples/worker/report.js';

export interface ObservedReport {
  readonly source: string;
  readonly event: ReportEvent;
  /** For job.started / job.stopped. */
  readonly job?: string | undefined;
  /** Epoch ms on the worker's own clock. */
  readonly time: number;
}

export interface SourceEnd {
  readonly source: string;
  /** Epoch ms on the reference clock (the node's / the recorder's). */
  readonly at: number;
  readonly how: 'terminated' | 'deleted';
}

/** A source's process died at `at` (reference clock) and its container was, or will be, restarted in place. */
export interface Crash {
  readonly source: string;
  readonly at: number;
}

export interface Span {
  readonly from: number;
  readonly to: number;
}

/** One job run by one source: [from, to), to = Infinity while it still runs. */
export interface Ownership extends Span {
  readonly job: string;
  readonly source: string;
  /** How it ended: its own stop line, the source's end, or a new process in the same source. */
  readonly endedBy: 'stopped' | 'worker.stopped' | 'terminated' | 'deleted' | 'crashed' | 'restarted' | 'running';
}

export interface OwnershipOptions {
  /** Per source, ms to add to its reports' times to put them on the reference clock. */
  readonly clockOffsets?: Readonly<Record<string, number>>;
  /** Processes that died without stopping their jobs, their containers restarted in place. */
  readonly crashes?: readonly Crash[];
}

export interface Ownerships {
  readonly ownerships: Ownership[];
  /** Report sequences that make no sense (a start twice, a stop without a start): kept, counted, not hidden. */
  readonly anomalies: string[];
}

/**
 * Ownership intervals from the reports. Reports of one source are taken in time
 * order, ties in arrival order (a worker logs a stop before the start it makes room for).
 */
export function ownershipsOf(reports: readonly ObservedReport[], ends: readonly SourceEnd[] = [], options: OwnershipOptions = {}): Ownerships {
  const offsets = options.clockOffsets ?? {};
  const bySource = new Map<string, Array<ObservedReport & { seq: number }>>();
  reports.forEach((r, seq) => {
    const list = bySource.get(r.source) ?? [];
    list.push({ ...r, time: r.time + (offsets[r.source] ?? 0), seq });
    bySource.set(r.source, list);
  });
  const endOf = new Map<string, SourceEnd>();
  for (const end of ends) {
    const known = endOf.get(end.source);
    // A terminated time is exact; a deletion seen is only a bound.
    if (!known || (known.how === 'deleted' && end.how === 'terminated')) endOf.set(end.source, end);
  }

  const crashesOf = new Map<string, number[]>();
  for (const c of options.crashes ?? []) crashesOf.set(c.source, [...(crashesOf.get(c.source) ?? []), c.at]);

  const ownerships: Ownership[] = [];
  const anomalies: string[] = [];
  for (const [source, list] of bySource) {
    list.sort((a, b) => a.time - b.time || a.seq - b.seq);
    const crashes = [...(crashesOf.get(source) ?? [])].sort((a, b) => a - b);
    const open = new Map<string, number>();
    let booted = false;
    // The current process: its first line and its last.
    let processStart = -Infinity;
    let lastLine = -Infinity;
    const closeAll = (at: number, endedBy: Ownership['endedBy']) => {
      for (const [job, from] of open) ownerships.push({ job, source, from, to: Math.max(from, at), endedBy });
      open.clear();
    };
    /** The current process's crash, if it died before `before`: its jobs end then (never before its last line). */
    const closeCrashed = (before: number): boolean => {
      const crash = crashes.find((at) => at >= processStart && at <= before);
      if (crash === undefined) return false;
      closeAll(Math.max(crash, lastLine), 'crashed');
      return true;
    };
    for (const r of list) {
      if (r.event === 'worker.started') {
        booted = true;
        if (!closeCrashed(r.time)) {
          if (open.size) anomalies.push(`${source}: a new worker process started at ${iso(r.time)} with ${open.size} jobs never stopped (ended at that restart)`);
          closeAll(r.time, 'restarted');
        }
        processStart = r.time;
      } else if (r.event === 'worker.stopped') {
        closeAll(r.time, 'worker.stopped');
      } else if (r.job === undefined) {
        anomalies.push(`${source}: ${r.event} without a job at ${iso(r.time)}`);
      } else if (r.event === 'job.started') {
        if (open.has(r.job)) anomalies.push(`${source}: ${r.job} started again at ${iso(r.time)} while running`);
        else open.set(r.job, r.time);
      } else {
        const from = open.get(r.job);
        if (from === undefined) {
          anomalies.push(`${source}: ${r.job} stopped at ${iso(r.time)} without a start`);
          // Read from the process's start, a stop without a start ran nothing; read from
          // the middle of a log, its start predates what we read: it ran since before any window.
          if (!booted) ownerships.push({ job: r.job, source, from: -Infinity, to: r.time, endedBy: 'stopped' });
        } else {
          ownerships.push({ job: r.job, source, from, to: r.time, endedBy: 'stopped' });
          open.delete(r.job);
        }
      }
      lastLine = r.time;
    }
    closeCrashed(Infinity);
    const end = endOf.get(source);
    if (end) closeAll(end.at, end.how);
    else closeAll(Infinity, 'running');
  }
  return { ownerships, anomalies };
}

export interface JobCoverage {
  readonly job: string;
  readonly uncoveredSeconds: number;
  readonly duplicateSeconds: number;
  /** Maximal spans with no running owner, clipped to the window. */
  readonly gaps: Span[];
  /** Maximal spans with two or more running owners. */
  readonly duplicates: Span[];
  /** Sources running the job in the window's last instant. */
  readonly ownersAtEnd: string[];
}

export interface CoverageReport {
  readonly window: Span;
  readonly jobs: JobCoverage[];
  readonly totals: {
    readonly uncoveredSeconds: number;
    readonly duplicateSeconds: number;
    readonly jobsUncovered: number;
    readonly jobsDuplicated: number;
  };
  /** Every gap of every job, in time order. */
  readonly gaps: Array<Span & { readonly job: string }>;
  /** Jobs the reports show running that are not in the expected set (a removed job still running). */
  readonly unexpectedJobs: string[];
  readonly anomalies: string[];
}

/** Per-job coverage of `jobs` over `window` (epoch ms, [from, to)). */
export function coverageOf(owned: Ownerships, jobs: readonly string[], window: Span): CoverageReport {
  const byJob = new Map<string, Ownership[]>();
  for (const o of owned.ownerships) {
    const list = byJob.get(o.job) ?? [];
    list.push(o);
    byJob.set(o.job, list);
  }
  const expected = new Set(jobs);
  const perJob = [...expected].map((job) => jobCoverage(job, byJob.get(job) ?? [], window));
  const unexpectedJobs = [...byJob.keys()]
    .filter((job) => !expected.has(job) && byJob.get(job)!.some((o) => o.from < window.to && o.to > window.from))
    .sort();
  return {
    window,
    jobs: perJob,
    totals: {
      uncoveredSeconds: round(perJob.reduce((sum, j) => sum + j.uncoveredSeconds, 0)),
      duplicateSeconds: round(perJob.reduce((sum, j) => sum + j.duplicateSeconds, 0)),
      jobsUncovered: perJob.filter((j) => j.gaps.length > 0).length,
      jobsDuplicated: perJob.filter((j) => j.duplicates.length > 0).length,
    },
    gaps: perJob.flatMap((j) => j.gaps.map((g) => ({ job: j.job, ...g }))).sort((a, b) => a.from - b.from || a.job.localeCompare(b.job)),
    unexpectedJobs,
    anomalies: owned.anomalies,
  };

  function jobCoverage(job: string, owners: readonly Ownership[], { from, to }: Span): JobCoverage {
    // Sweep: +1 at each start, −1 at each end, all clipped to the window.
    const edges: Array<[number, number]> = [];
    for (const o of owners) {
      const start = Math.max(o.from, from);
      const end = Math.min(o.to, to);
      if (end > start) edges.push([start, +1], [end, -1]);
    }
    edges.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const gaps: Span[] = [];
    const duplicates: Span[] = [];
    let count = 0;
    let at = from;
    const account = (until: number) => {
      if (until <= at) return;
      const span = { from: at, to: until };
      if (count === 0) extend(gaps, span);
      else if (count >= 2) extend(duplicates, span);
    };
    for (const [t, delta] of edges) {
      account(t);
      at = Math.max(at, t);
      count += delta;
    }
    account(to);
    const ownersAtEnd = owners.filter((o) => o.from < to && o.to >= to).map((o) => o.source).sort();
    return { job, uncoveredSeconds: round(seconds(gaps)), duplicateSeconds: round(seconds(duplicates)), gaps, duplicates, ownersAtEnd };
  }
}

/** Joins spans that touch (a stop and a start at the same instant leave no gap between two gaps). */
function extend(spans: Span[], span: Span): void {
  const last = spans[spans.length - 1];
  if (last && last.to === span.from) spans[spans.length - 1] = { from: last.from, to: span.to };
  else spans.push(span);
}

/** The jobs each source runs at instant `t`: the workers' own answer to "who runs what now". */
export function ownersAt(owned: Ownerships, t: number): Map<string, string[]> {
  const owners = new Map<string, string[]>();
  for (const o of owned.ownerships) {
    if (o.from <= t && t < o.to) owners.set(o.job, [...(owners.get(o.job) ?? []), o.source].sort());
  }
  return owners;
}

/**
 * The last instant in `window` at which any job gained or lost an owner: when
 * the state the workers ran at the window's end began (the window's start if nothing changed).
 */
export function lastChangeIn(owned: Ownerships, window: Span): number {
  let last = window.from;
  for (const o of owned.ownerships) {
    for (const t of [o.from, o.to]) if (t > last && t <= window.to) last = t;
  }
  return last;
}

/**
 * A source's clock offset from pairs (its own report time, the time the
 * container runtime stamped the line on the node). The runtime stamps after
 * the worker writes, so the smallest difference is skew plus the least
 * latency; below `toleranceMs` it is latency alone and no correction is made.
 */
export function clockOffset(samples: ReadonlyArray<{ readonly time: number; readonly loggedAt: number }>, toleranceMs = 500): number {
  if (samples.length === 0) return 0;
  const least = Math.min(...samples.map((s) => s.loggedAt - s.time));
  return Math.abs(least) < toleranceMs ? 0 : least;
}

const seconds = (spans: readonly Span[]) => spans.reduce((sum, s) => sum + (s.to - s.from), 0) / 1000;
const round = (seconds: number) => Math.round(seconds * 1000) / 1000;
const iso = (ms: number) => (Number.isFinite(ms) ? new Date(ms).toISOString() : String(ms));
