// Reading the reference worker's reports (examples/worker/report.ts) back out
// of its log: one line, with or without the RFC3339Nano stamp the container
// runtime puts in front (`kubectl logs --timestamps`, the Log API's
// `timestamps=true`). Anything that is not a report (other log lines, partial
// lines, non-JSON output) is not one and yields undefined.
import { REPORT_EVENTS, type ReportEvent } from '../../../examples/worker/report.js';

export interface ParsedReport {
  readonly event: ReportEvent;
  readonly job?: string;
  readonly pod?: string;
  readonly uid?: string;
  readonly version?: number;
  /** The top-level config version the worker had loaded (job reports). */
  readonly configVersion?: number;
  /** Epoch ms, the worker's own clock. */
  readonly time: number;
  /** Epoch ms, the container runtime's stamp (the node's clock), when the line had one. */
  readonly loggedAt?: number;
}

const STAMPED = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(Z|[+-]\d\d:\d\d) (.*)$/;

/** Epoch ms of an RFC 3339 time with any number of fraction digits (Date.parse stops at ms). */
export function rfc3339Ms(seconds: string, fraction: string | undefined, zone: string): number {
  const whole = Date.parse(`${seconds}${zone}`);
  return fraction ? whole + Number(`0.${fraction}`) * 1000 : whole;
}

export function parseReportLine(line: string): ParsedReport | undefined {
  let text = line.trim();
  let loggedAt: number | undefined;
  const stamped = STAMPED.exec(text);
  if (stamped) {
    loggedAt = rfc3339Ms(stamped[1]!, stamped[2], stamped[3]!);
    text = stamped[4]!;
  }
  if (!text.startsWith('{')) return undefined;
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  const event = record.event;
  if (typeof event !== 'string' || !(REPORT_EVENTS as readonly string[]).includes(event)) return undefined;
  const time = typeof record.time === 'number' ? record.time : typeof record.time === 'string' ? Date.parse(record.time) : NaN;
  if (!Number.isFinite(time)) return undefined;
  const isJob = event === 'job.started' || event === 'job.stopped';
  if (isJob && typeof record.job !== 'string') return undefined;
  return {
    event: event as ReportEvent,
    time,
    ...(isJob ? { job: record.job as string } : {}),
    ...(typeof record.pod === 'string' ? { pod: record.pod } : {}),
    ...(typeof record.uid === 'string' ? { uid: record.uid } : {}),
    ...(typeof record.version === 'number' ? { version: record.version } : {}),
    ...(typeof record.configVersion === 'number' ? { configVersion: record.configVersion } : {}),
    ...(loggedAt !== undefined ? { loggedAt } : {}),
  };
}
