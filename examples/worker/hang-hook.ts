// A test hook, off unless HANG_JOBS_ON_SIGNAL names a signal (e.g. SIGUSR2):
// on that signal the jobs running then stop making progress, as a hung job
// would while the process lives and its HTTP server answers. The health check
// fails while any of them runs (so the heartbeat stops and /healthz says so),
// until each is stopped. The end-to-end tier and bench:failover use it
// (docs/failure-detection.md); nothing else should set it.
export interface HangHook {
  /** The SDK's health callback: false while a hung job runs. */
  health(jobs: readonly string[]): boolean;
  /** The reference worker marks a job stopped here (a stopped job hangs no more). */
  stopped(job: string): void;
}

const NO_HOOK: HangHook = { health: () => true, stopped: () => undefined };

export function hangHook(
  signal: string | undefined,
  running: () => readonly string[],
  onHang: (jobs: readonly string[]) => void,
  on: (signal: NodeJS.Signals, listener: () => void) => void = (s, l) => void process.on(s, l),
): HangHook {
  if (!signal) return NO_HOOK;
  const hung = new Set<string>();
  on(signal as NodeJS.Signals, () => {
    for (const job of running()) hung.add(job);
    onHang([...hung].sort());
  });
  return {
    health: (jobs) => !jobs.some((job) => hung.has(job)),
    stopped: (job) => void hung.delete(job),
  };
}
