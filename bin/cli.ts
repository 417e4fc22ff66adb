// swarm CLI: dispatches `swarm <command> ...` to bin/commands/<command>.ts.
// Every failure is one clear line on stderr and a non-zero exit code, never a stack trace.
import { CliError } from './commands/cli-error.js';

type Command = { run(argv: string[]): Promise<number> };

const commands: Record<string, { summary: string; load: () => Promise<Command> }> = {
  assign: { summary: 'print config.yml for a job list over N replicas', load: () => import('./commands/assign.js') },
  plan: { summary: 'show the moves, lower bound and restart order of a resize or job change', load: () => import('./commands/plan.js') },
  event: { summary: 'send a synthetic ApiServerSource CloudEvent (event send --to URL ...)', load: () => import('./commands/event.js') },
};

function usage(): string {
  const lines = Object.entries(commands).map(([name, c]) => `  ${name.padEnd(8)} ${c.summary}`);
  return ['usage: swarm <command> [options]', '', 'commands:', ...lines].join('\n');
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === '-h' || name === '--help') {
    process.stdout.write(usage() + '\n');
    return name ? 0 : 2;
  }
  const command = commands[name];
  if (!command) throw new CliError(`unknown command "${name}" (try: ${Object.keys(commands).join(', ')})`);
  return (await command.load()).run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    const message = err instanceof Error ? err.message : String(err);
    process.stderr.write(`swarm: ${message}\n`);
    process.exit(err instanceof CliError ? err.exitCode : 1);
  },
);
