// Waiting in the conformance runner: every waiting step gives up after
// WAIT_MS, a bound on a failure, never a measured time.

/** How long a step waits for what it expects. */
export const WAIT_MS = 20_000;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));

export async function until<T>(what: string, check: () => T | undefined, describe: () => string): Promise<T> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}\n${describe()}`);
    await sleep(50);
  }
}
