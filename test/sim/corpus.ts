// The regression corpus: each defect the simulator found, kept as its shrunk
// schedule (actions and faults, plain data) named after the defect. A seed
// alone stops meaning the same schedule once the code changes; these do not.
import { readFileSync, readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Schedule } from './schedule.js';

export interface CorpusEntry {
  name: string;
  /** What the defect was, and the invariant it broke. */
  defect: string;
  invariant: string;
  /** Found and not fixed yet: the simulator must still find it (its power), until a fix makes it hold. */
  open?: boolean;
  schedule: Schedule;
}

const dir = fileURLToPath(new URL('./corpus/', import.meta.url));

export function loadCorpus(): CorpusEntry[] {
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith('.json')).sort();
  } catch {
    return [];
  }
  return files.map((f) => JSON.parse(readFileSync(`${dir}${f}`, 'utf8')) as CorpusEntry);
}
