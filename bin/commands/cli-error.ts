/** A user-facing CLI failure: printed as one line, exit code 2 (usage/input) by default. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 2,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** What the process says and exits with when a command fails: one line, 2 for a CliError, 1 otherwise. */
export function failure(err: unknown): { line: string; exitCode: number } {
  const message = err instanceof Error ? err.message : String(err);
  return { line: `swarm: ${message.split('\n')[0]}\n`, exitCode: err instanceof CliError ? err.exitCode : 1 };
}
