// The resync period as shipped: knative/base/pingsource.yaml's `schedule` is
// its one home; the simulator's PingSource and the benchmarks read it here
// rather than keep a copy.
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';

const PINGSOURCE = 'knative/base/pingsource.yaml';

/** The tree's file, found upwards from here (the simulator's campaign runs this bundled under node_modules/.cache). */
function shippedFile(): string {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, PINGSOURCE))) return join(dir, PINGSOURCE);
    if (dirname(dir) === dir) throw new Error(`${PINGSOURCE} not found above ${fileURLToPath(import.meta.url)}`);
  }
}

/** The shipped PingSource's cron schedule, e.g. "*\/5 * * * *". */
export function shippedResyncSchedule(): string {
  const docs = parseAllDocuments(readFileSync(shippedFile(), 'utf8')).map((d) => d.toJS() as { kind?: string; spec?: { schedule?: unknown } });
  const schedule = docs.find((d) => d?.kind === 'PingSource')?.spec?.schedule;
  if (typeof schedule !== 'string') throw new Error(`${PINGSOURCE}: no PingSource with a schedule`);
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
