// The worker's reports: one JSON log line per job it starts or stops, plus one
// when the process starts and one when it is done stopping. They are what the
// worker actually ran, observed, not what the ConfigMap said it should run;
// the coverage recorder (test/support/coverage-recorder) rebuilds each job's owners from
// them. Format (one pino line each; documented in examples/worker/README.md):
//
//   {"time":"<ISO-8601>","event":"job.started","job":"stream:a","version":4,"configVersion":4,"pod":"swarm-worker-0","uid":"…",…}
//
// Pure: main.ts adds the time by logging the report the moment it happens.
import type { ShareChange } from '../../sdk/typescript/src/share.js';
import type { Transition, WorkerState } from '../../sdk/typescript/src/state.js';

export const REPORT_EVENTS = ['worker.started', 'job.started', 'job.stopped', 'worker.stopped'] as const;
export type ReportEvent = (typeof REPORT_EVENTS)[number];

/** Who is reporting: the pod's name and, when the downward API gives it, its uid. */
export interface Reporter {
  readonly pod: string;
  readonly uid?: string | undefined;
}

export interface JobReport {
  readonly event: 'job.started' | 'job.stopped';
  readonly job: string;
  /** Version of this worker's share that started (or had been running) the job. */
  readonly version: number;
  /** The top-level config version the worker had loaded. */
  readonly configVersion: number | undefined;
  readonly pod: string;
  readonly uid?: string;
}

export interface LifecycleReport {
  readonly event: 'worker.started' | 'worker.stopped';
  readonly pod: string;
  readonly uid?: string;
}

export type Report = JobReport | LifecycleReport;

const who = (reporter: Reporter) => ({ pod: reporter.pod, ...(reporter.uid ? { uid: reporter.uid } : {}) });

/**
 * The reports for one share change: stops before starts, as the worker does
 * them (a moved job is never started twice by one worker; stopping first frees
 * its resources). Stops carry the version that had been running, starts the new one.
 */
export function jobReports(
  change: ShareChange,
  versions: { readonly before: number; readonly after: number; readonly configVersion: number | undefined },
  reporter: Reporter,
): JobReport[] {
  const report = (event: JobReport['event'], version: number) => (job: string): JobReport => ({
    event,
    job,
    version,
    configVersion: versions.configVersion,
    ...who(reporter),
  });
  return [...change.lost.map(report('job.stopped', versions.before)), ...change.gained.map(report('job.started', versions.after))];
}

export function lifecycleReport(event: LifecycleReport['event'], reporter: Reporter): LifecycleReport {
  return { event, ...who(reporter) };
}

/** The job reports of one state transition (none unless the share changed). */
export function transitionReports(before: WorkerState, step: Transition, reporter: Reporter): JobReport[] {
  if (step.kind !== 'changed') return [];
  return jobReports(step.change, { before: before.share.version, after: step.state.share.version, configVersion: step.state.configVersion }, reporter);
}
