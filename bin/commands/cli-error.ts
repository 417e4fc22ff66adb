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
