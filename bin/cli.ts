// swarm CLI: dispatches `swarm <command> ...` to bin/commands/<command>.ts.
// Every failure is one clear line on stderr and a non-zero exit code, never a stack trace:
// 2 when the command line or its input is wrong (CliError), 1 for anything else
// (the event's target refused or could not be reached, output could not be written).
import { realpathSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import type { Io } from './commands/assign.js';
import { CliError, failure } from './commands/cli-error.js';

type Command = { run(argv: string[], io?: Io): Promise<number> };

const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  assign: { summary: 'print config.yml for a job list over N replicas', load: () => import('./commands/assign.js') },
  plan: { summary: 'show the moves, lower bound and restart order of a resize or job change', load: () => import('./commands/plan.js') },
  version: { summary: 'print the version and the commit this tree (or release) is', load: () => import('./commands/version.js') },
  event: { summary: 'send a synthetic ApiServerSource CloudEvent (event send --to URL ...)', load: () => import('./commands/event.js') },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return ['usage: swarm <command> [options]', '', 'commands:', ...lines].join('\n');
}

/** Runs one command line; `io` stands in for the process's streams in tests. */
export async function main(argv: string[], io?: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === '-h' || name === '--help') {
    (io?.stdout ?? ((text: string) => process.stdout.write(text)))(usage() + '\n');
    return 0;
  }
  if (!name) throw new CliError(`missing command (try: ${Object.keys(commands).join(', ')}; swarm --help says what each does)`);
  const command = commands[name];
  if (!command) throw new CliError(`unknown command "${name}" (try: ${Object.keys(commands).join(', ')})`);
  return (await command.load()).run(rest, io);
}

/**
 * Resolves once everything written to the stream so far has been handed to the OS.
 * On a pipe, writes past the pipe's buffer (64 KiB) are queued in the process, and
 * process.exit() would drop them: the write callback of an empty write comes after them.
 */
function flushed(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => {
    if (stream.destroyed || stream.writableEnded) resolve();
    else stream.write('', () => resolve());
  });
}

let outputLost = false;

async function exit(code: number): Promise<never> {
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(outputLost && code === 0 ? 1 : code);
}

function runAsProcess(): void {
  // The reader went away (`swarm plan | head`): say so once; the exit code says it too.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (outputLost) return;
    outputLost = true;
    process.stderr.write(`swarm: output closed before it was all written (${err.code ?? err.message})\n`);
  });
  main(process.argv.slice(2)).then(
    (code) => exit(code),
    (err: unknown) => {
      const { line, exitCode } = failure(err);
      process.stderr.write(line);
      return exit(exitCode);
    },
  );
}

// Run directly (bin/swarm, through a symlink too); imported by tests for `main` alone.
const invokedAs = ((): string | undefined => {
  try {
    return pathToFileURL(realpathSync(process.argv[1] ?? '')).href;
  } catch {
    return undefined;
  }
})();
if (import.meta.url === invokedAs) runAsProcess();
