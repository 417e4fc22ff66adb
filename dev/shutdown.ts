// Stopping a dev process cleanly whatever its stdout is. `npm start | tee log`
// then Ctrl-C: the terminal signals every process of the pipeline, tee is gone
// first, and the next write to stdout fails with EPIPE; unhandled, that error
// kills the process before its cleanup has stopped what it started (the
// control plane's processes run in their own process groups and outlive it).
// So: output errors are ignored (a closed pipe or a hung-up terminal is not
// worth dying for), and a signal runs the cleanup once, then exits.

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** stdout/stderr errors (EPIPE, EIO, a destroyed stream) are dropped instead of crashing. */
export function ignoreOutputErrors(streams: readonly NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) stream.on('error', () => undefined);
}

/** Writes a line to stdout unless it is gone. */
export function say(text: string): void {
  if (process.stdout.writable) process.stdout.write(text);
}

/**
 * On SIGINT, SIGTERM or SIGHUP: run `cleanup` once (a second signal while it
 * runs is ignored), then exit: 0 when the cleanup succeeded (a stop asked
 * for is not a failure), 1 when it threw. Output errors are ignored from now
 * on. Returns a function that runs the same cleanup and exits with `code`
 * (or 1 if the cleanup threw).
 */
export function stopOnSignals(
  cleanup: () => Promise<void>,
  options: { onStopping?: (signal: string) => void } = {},
): (code?: number) => Promise<void> {
  ignoreOutputErrors();
  let stopping: Promise<void> | undefined;
  const stop = (signal: string, code = 0): Promise<void> => {
    stopping ??= (async () => {
      try {
        options.onStopping?.(signal);
      } catch {
        // reporting must not stand in the way of cleaning up
      }
      try {
        await cleanup();
      } catch (err) {
        process.stderr.write(`cleanup failed: ${err instanceof Error ? err.message : String(err)}\n`);
        code = 1;
      }
      process.exit(code);
    })();
    return stopping;
  };
  for (const signal of SIGNALS) process.on(signal, () => void stop(signal));
  return (code = 0) => stop('done', code);
}
