// The resync period as shipped: knative/base/pingsource.yaml's `schedule` is
// its one home; the simulator's PingSource and the benchmarks read it here
// rather than keep a copy.
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';

const PINGSOURCE = new URL('../../knative/base/pingsource.yaml', import.meta.url);

/** The shipped PingSource's cron schedule, e.g. "*\/5 * * * *". */
export function shippedResyncSchedule(): string {
  const docs = parseAllDocuments(readFileSync(PINGSOURCE, 'utf8')).map((d) => d.toJS() as { kind?: string; spec?: { schedule?: unknown } });
  const schedule = docs.find((d) => d?.kind === 'PingSource')?.spec?.schedule;
  if (typeof schedule !== 'string') throw new Error('knative/base/pingsource.yaml: no PingSource with a schedule');
  return schedule;
}

/**
 * The period of a schedule that fires every N minutes on the minute
 * ("* * * * *" or "*\/N * * * *", N dividing 60), in ms; any other cron is
 * refused (the simulator fires its pings at fixed multiples of the period).
 */
export function periodMsOf(schedule: string): number {
  const match = /^(\*|\*\/(\d+)) \* \* \* \*$/.exec(schedule.trim());
  const minutes = match ? (match[2] === undefined ? 1 : Number(match[2])) : NaN;
  if (!(minutes >= 1 && 60 % minutes === 0)) throw new Error(`resync schedule "${schedule}": only "* * * * *" or "*/N * * * *" (N dividing 60) have one period`);
  return minutes * 60_000;
}
