// bench:failover's figures as bench/RESULTS.md shows them (pure).
import type { IdleRun } from './failover-idle.js';
import type { RestCost } from './failover-rest.js';

/** Each part has its own section, so a run of one part (`--trials 0`, `--skip-rest`, `--skip-idle`) leaves the others' figures. */
export const FAILOVER_SECTION = 'failover';
export const FAILOVER_REST_SECTION = 'failover-rest';
export const FAILOVER_IDLE_SECTION = 'failover-idle';

/** The `p`-th percentile (0–100) of `values`, nearest rank; undefined when empty. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface TrialFigures {
  readonly fault: string;
  readonly handoff: string;
  /** ms from the fault until the peer's reports covered the share; undefined: not within the wait. */
  readonly takeoverMs: ReadonlyArray<number | undefined>;
  readonly recoveredMs: readonly number[];
  /** Trials whose victim's container its liveness probe restarted. */
  readonly restarted: number;
}

const s = (ms: number | undefined) => (ms === undefined ? '–' : (ms / 1000).toFixed(1));

/** One row per fault: failover time p50/p95/max against the lease, and the recovery. */
export function trialsTable(rows: readonly TrialFigures[], leaseSeconds: number): string[] {
  const bound = leaseSeconds + 10;
  return [
    `| fault | handoff | trials | failover p50 (s) | p95 (s) | max (s) | within leaseSeconds + 10 s = ${bound} s | back to every job once, p50 (s) | liveness restarts |`,
    '|---|---|---:|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => {
      const done = r.takeoverMs.filter((t): t is number => t !== undefined);
      const within = done.filter((t) => t <= bound * 1000).length;
      return `| ${r.fault} | ${r.handoff} | ${r.takeoverMs.length} | ${s(percentile(done, 50))} | ${s(percentile(done, 95))} | ${s(done.length ? Math.max(...done) : undefined)} | ${within}/${r.takeoverMs.length} | ${s(percentile(r.recoveredMs, 50))} | ${r.restarted} |`;
    }),
  ];
}

/** One row per pool size: wake-ups and API requests per minute at rest. */
export function restTable(rows: readonly RestCost[], leaseSeconds: number): string[] {
  const n = (x: number) => x.toFixed(0);
  return [
    `| workers | function wake-ups / min | API requests / min (over none) | of which Lease PUTs / min | expected renewals / min (60 / (${leaseSeconds}/3) each) | window (s) |`,
    '|---:|---:|---:|---:|---:|---:|',
    ...rows.map((r) => `| ${r.workers} | ${r.wakeupsPerMinute.toFixed(1)} | ${n(r.apiRequestsPerMinute)} | ${n(r.leasePutsPerMinute)} | ${n((r.workers * 60) / (leaseSeconds / 3))} | ${r.windowSeconds} |`),
  ];
}

/** The idle run in one line. */
export function idleLine(run: IdleRun): string {
  const started = Object.entries(run.podsStarted).map(([f, n]) => `${f} ${n}`).join(', ');
  const zero =
    run.toZeroSeconds === undefined
      ? `both functions did not reach zero pods within ${run.watchedSeconds.toFixed(0)} s`
      : `both functions at zero pods ${run.toZeroSeconds.toFixed(0)} s after the change, and at zero for ${run.zeroSeconds.toFixed(0)} s of the ${(run.watchedSeconds - run.toZeroSeconds).toFixed(0)} s watched after that`;
  return `${zero}; pods started meanwhile: ${started}.`;
}
