// swarm assign: print config.yml for a job list over N replicas.
import { readFile } from 'node:fs/promises';
import { checkName, quoteName } from '../../lib/api/names.js';
import { LIMITS } from '../../lib/api/schema.js';
import { assign, AssignmentInputError, parseJobList, type JobSpec } from '../../lib/assignment/index.js';
import { nextConfig, parse, render, WorkerConfigError, type WorkerConfig } from '../../lib/workerconfig/index.js';
import { CliError } from './cli-error.js';

export interface Io {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly stdin: () => Promise<string>;
}

export const processIo: Io = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: async () => {
    // Waiting silently on a terminal looks like a hang; say what is missing instead.
    if (process.stdin.isTTY) throw new CliError('no --jobs FILE given and stdin is a terminal (pipe a job list or pass --jobs)');
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  },
};

const USAGE = 'usage: swarm assign --statefulset NAME --replicas N [--jobs FILE] [--previous FILE]';

export async function run(argv: string[], io: Io = processIo): Promise<number> {
  const flags = parseFlags(argv, { statefulset: 'value', replicas: 'value', jobs: 'value', previous: 'value', help: 'switch' }, USAGE);
  if (flags.help) {
    io.stdout(USAGE + '\n');
    return 0;
  }
  const statefulSetName = statefulSetFlag(flags, USAGE);
  const replicas = replicaCount(requireFlag(flags, 'replicas', USAGE), '--replicas');
  const jobs = await readJobs(flags.jobs, io);
  const previous = flags.previous === undefined ? undefined : await readConfig(flags.previous);
  const result = guard(() =>
    assign({ statefulSetName, replicas, jobs, previous: previous === undefined ? undefined : sharesOf(previous) }),
  );
  for (const { job, reason } of result.unhonouredDedications) io.stderr(`swarm: warning: dedicated job ${JSON.stringify(job)} not honoured: ${reason}\n`);
  io.stdout(render(nextConfig(previous, result.assignment)));
  return 0;
}

function sharesOf(config: WorkerConfig): Record<string, readonly string[]> {
  return Object.fromEntries(Object.entries(config.workloads).map(([w, s]) => [w, s.jobs]));
}

type FlagKinds = Record<string, 'value' | 'switch'>;
export type Flags = Record<string, string | undefined> & { help?: string };

/** --name VALUE / --name=VALUE / --switch; anything else is a usage error. */
export function parseFlags(argv: readonly string[], kinds: FlagKinds, usage: string): Flags {
  const flags: Flags = {};
  for (let k = 0; k < argv.length; k++) {
    const arg = argv[k]!;
    const match = /^--([a-z-]+)(?:=(.*))?$/.exec(arg) ?? (arg === '-h' ? ['', 'help', undefined] : null);
    if (!match) throw new CliError(`unexpected argument "${arg}" (${usage})`);
    const name = match[1]!;
    const kind = kinds[name];
    if (kind === undefined) throw new CliError(`unknown option --${name} (${usage})`);
    if (flags[name] !== undefined) throw new CliError(`--${name} given twice`);
    if (kind === 'switch') {
      if (match[2] !== undefined) throw new CliError(`--${name} takes no value`);
      flags[name] = 'true';
      continue;
    }
    const value = match[2] ?? argv[++k];
    if (value === undefined || (match[2] === undefined && value.startsWith('--'))) throw new CliError(`--${name} needs a value`);
    flags[name] = value;
  }
  return flags;
}

export function requireFlag(flags: Flags, name: string, usage: string): string {
  const value = flags[name];
  if (value === undefined || value === '') throw new CliError(`missing --${name} (${usage})`);
  return value;
}

/** What a Swarm can have: the schema's maxWorkers. */
export function replicaCount(text: string, flag: string): number {
  if (!/^(0|[1-9][0-9]*)$/.test(text)) throw new CliError(`${flag} must be a non-negative integer, got ${quoteName(text)}`);
  if (Number(text) > LIMITS.maxWorkers) throw new CliError(`${flag} ${text} is more than a Swarm's ${LIMITS.maxWorkers} workers (maxWorkers)`);
  return Number(text);
}

/** A StatefulSet name a Swarm can refer to: a DNS-1123 label, short enough for its pods' labels. */
export function statefulSetFlag(flags: Flags, usage: string): string {
  const name = requireFlag(flags, 'statefulset', usage);
  const invalid = checkName('--statefulset', 'StatefulSet', name);
  if (invalid !== undefined) throw new CliError(invalid);
  if (name.length > LIMITS.statefulSetNameMaxLength) {
    throw new CliError(`--statefulset: ${quoteName(name)}: longer than ${LIMITS.statefulSetNameMaxLength} characters (its pods' controller-revision-hash label would pass 63)`);
  }
  return name;
}

export async function readJobs(file: string | undefined, io: Io): Promise<JobSpec[]> {
  const text = file === undefined ? await io.stdin() : await readText(file);
  return guard(() => parseJobList(text, file ?? 'stdin'));
}

export async function readConfig(file: string): Promise<WorkerConfig> {
  const text = await readText(file);
  return guard(() => parse(text, file));
}

export async function readText(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`cannot read ${file}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a directory' : (error as Error).message}`);
  }
}

/** Input errors from the pure modules become one-line CLI errors. */
export function guard<T>(compute: () => T): T {
  try {
    return compute();
  } catch (error) {
    if (error instanceof AssignmentInputError || error instanceof WorkerConfigError) throw new CliError(error.message);
    throw error;
  }
}
