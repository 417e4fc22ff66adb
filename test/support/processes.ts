// Process checks for tests that start real processes (dev/ shutdown, npm start).
import { readFileSync } from 'node:fs';

/** The process exists and is not a zombie (exited, not yet reaped). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** SIGKILLs each process group (by its leader's pid) still there: what a test started must not outlive it. */
export function killGroups(leaders: readonly number[]): void {
  for (const pid of leaders) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      // gone, as it should be
    }
  }
}
