// ./bin/swarm as a user runs it: all of the output arrives however slowly it is
// read, and every error is one line on stderr with a consistent exit code
// (2: the command line or its input is wrong; 1: anything else).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { main } from '../../bin/cli.js';
import { run as assignCommand, type Io } from '../../bin/commands/assign.js';
import { failure } from '../../bin/commands/cli-error.js';
import { run as planCommand } from '../../bin/commands/plan.js';
import { LIMITS } from '../../lib/api/schema.js';

const repo = new URL('../../', import.meta.url).pathname;
const swarm = join(repo, 'bin/swarm');
const dir = mkdtempSync(join(tmpdir(), 'swarm-cli-process-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

// 40,000 jobs of 26 characters: config.yml ≈ 1.5 MB, plan --json ≈ 1.3 MB.
const jobs = file('jobs.txt', Array.from({ length: 40_000 }, (_, i) => `stream-${String(i).padStart(8, '0')}-abcdefghij\n`).join(''));

interface Exit {
  code: number | null;
  stdout: Buffer;
  stderr: string;
}

/** Runs bin/swarm; with `slow`, reads nothing for a while, then a chunk at a time with pauses. */
function runSwarm(argv: string[], options: { stdin?: string; slow?: boolean } = {}): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(swarm, argv, { cwd: repo, stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    child.stdin.end(options.stdin ?? '');
    const readAll = async () => {
      if (options.slow) await sleep(1500); // the child is done computing and wants to exit with the pipe full
      for await (const chunk of child.stdout) {
        out.push(chunk as Buffer);
        if (options.slow) await sleep(5);
      }
    };
    const read = readAll();
    child.on('error', reject);
    child.on('close', (code) => void read.then(() => resolve({ code, stdout: Buffer.concat(out), stderr: err }), reject));
  });
}

function capture(stdin = ''): Io & { out: string; err: string } {
  const io = { out: '', err: '', stdout: (t: string) => void (io.out += t), stderr: (t: string) => void (io.err += t), stdin: async () => stdin };
  return io;
}

describe('no output is lost on a pipe', () => {
  it.each([
    ['assign', ['assign', '--statefulset', 'swarm-worker', '--replicas', '7', '--jobs', jobs], assignCommand],
    ['plan --json', ['plan', '--statefulset', 'swarm-worker', '--replicas', '7', '--from', '5', '--jobs', jobs, '--json'], planCommand],
  ] as const)('%s: every byte of > 1 MB reaches a slow reader, exit 0', async (_what, argv, command) => {
    const expected = capture();
    expect(await command(argv.slice(1), expected)).toBe(0);
    expect(Buffer.byteLength(expected.out)).toBeGreaterThan(1024 * 1024);
    const result = await runSwarm([...argv], { slow: true });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout.length).toBe(Buffer.byteLength(expected.out));
    expect(result.stdout.toString('utf8') === expected.out).toBe(true);
  }, 60_000);
});

const aliasBomb = ['a', 'b', 'c', 'd', 'e', 'f', 'g']
  .map((name, k, names) => `- &${name} [${Array.from({ length: 9 }, () => (k === 0 ? 'x' : `*${names[k - 1]}`)).join(',')}]`)
  .join('\n');
const objectBomb = `apiVersion: v1\nkind: Pod\nmetadata: {name: p, namespace: n}\n${aliasBomb.replace(/^- /gm, (_m, offset: number) => `k${offset}: `)}\n`;
const deep = `- ${'['.repeat(50_000)}${']'.repeat(50_000)}\n`;

// In-process (spawning tsx per case is seconds each on a shared machine): the
// same main() and the same failure() line and code the process uses.
describe('every error: one line on stderr, a consistent exit code, nothing on stdout', () => {
  const sts = ['--statefulset', 'w'];
  const cases: Array<[string, string[], number, RegExp, string?]> = [
    ['no command', [], 2, /^missing command/],
    ['an unknown command', ['bogus'], 2, /^unknown command "bogus"/],
    ['a missing flag', ['assign', '--replicas', '2'], 2, /^missing --statefulset/],
    ['an unknown flag', ['assign', ...sts, '--replicas', '2', '--bogus'], 2, /^unknown option --bogus/],
    ['replicas not a number', ['assign', ...sts, '--replicas', 'two'], 2, /^--replicas must be a non-negative integer, got "two"$/],
    ['negative replicas', ['assign', ...sts, '--replicas', '-3'], 2, /^--replicas must be a non-negative integer, got "-3"$/],
    ['replicas past maxWorkers', ['assign', ...sts, '--replicas', '100000000'], 2, new RegExp(`^--replicas 100000000 is more than a Swarm's ${LIMITS.maxWorkers} workers`)],
    ['--from past maxWorkers', ['plan', ...sts, '--replicas', '2', '--from', '99999999999'], 2, /^--from 99999999999 is more than/],
    ['a StatefulSet name with a slash', ['assign', '--statefulset', 'bad/NAME', '--replicas', '2'], 2, /^--statefulset: "bad\/NAME": not a DNS-1123 label/],
    ['a StatefulSet name with a dot', ['plan', '--statefulset', 'w.x', '--replicas', '2', '--from', '1'], 2, /^--statefulset: "w\.x": not a DNS-1123 label/],
    ['a StatefulSet name past 52 characters', ['assign', '--statefulset', 's'.repeat(53), '--replicas', '2'], 2, /longer than 52 characters/],
    ['an unreadable job list', ['assign', ...sts, '--replicas', '2', '--jobs', join(dir, 'absent')], 2, /^cannot read .*absent: no such file$/],
    ['a directory as the job list', ['assign', ...sts, '--replicas', '2', '--jobs', dir], 2, /: is a directory$/],
    ['invalid YAML', ['assign', ...sts, '--replicas', '2', '--jobs', file('bad.yml', '- a\n- [b\n')], 2, /bad\.yml:\d+: invalid YAML/],
    ['a YAML alias bomb', ['assign', ...sts, '--replicas', '2', '--jobs', file('bomb.yml', aliasBomb)], 2, /bomb\.yml: invalid YAML: Excessive alias count/],
    ['YAML nested 50,000 deep', ['assign', ...sts, '--replicas', '2', '--jobs', file('deep.yml', deep)], 2, /deep\.yml.*invalid YAML/],
    ['jobs from stdin, invalid', ['assign', ...sts, '--replicas', '2'], 2, /^stdin:\d+: invalid YAML/, '- a\n- [b\n'],
    ['a malformed --previous', ['assign', ...sts, '--replicas', '2', '--jobs', jobs, '--previous', file('prev.yml', 'version: 1\nworkloads:\n  w-0: &a\n    jobs: [a]\n    version: 1\n  w-1: *a\n')], 2, /prev\.yml:6:\d+: workloads\.w-1/],
    ['plan without a starting point', ['plan', ...sts, '--replicas', '2'], 2, /^give exactly one of --previous FILE or --from N/],
    ['plan with a handoff (restarts always break first)', ['plan', ...sts, '--replicas', '2', '--from', '1', '--handoff', 'MakeBeforeBreak'], 2, /^unknown option --handoff/],
    ['event without a subcommand', ['event'], 2, /^missing subcommand/],
    ['event send without --to', ['event', 'send', '--type', 'add', '-f', 'x.yaml'], 2, /^--to URL is required/],
    ['event send with an alias bomb', ['event', 'send', '--to', 'http://127.0.0.1:9/', '--type', 'add', '-f', file('bomb-object.yml', objectBomb)], 2, /not valid YAML: Excessive alias count/],
    ['event send to nowhere', ['event', 'send', '--to', 'http://127.0.0.1:9/', '--type', 'add', '-f', join(repo, 'knative/samples/swarm.yaml')], 1, /^POST http:\/\/127\.0\.0\.1:9\/ failed/],
  ];

  it.each(cases)('%s', async (_what, argv, code, message, stdin) => {
    const io = capture(stdin);
    const outcome = await main(argv, io).then(
      () => undefined,
      (err: unknown) => failure(err),
    );
    expect(outcome?.exitCode).toBe(code);
    expect(io.out).toBe('');
    const lines = outcome!.line.split('\n');
    expect(lines).toHaveLength(2); // one line and its newline
    expect(lines[0]).toMatch(/^swarm: /);
    expect(lines[0]!.slice('swarm: '.length)).toMatch(message);
  });

  it.each([
    ['bad input', ['assign', '--statefulset', 'bad/NAME', '--replicas', '2'], 2, 'swarm: --statefulset: "bad/NAME": not a DNS-1123 label'],
    ['a target that cannot be reached', ['event', 'send', '--to', 'http://127.0.0.1:9/', '--type', 'add', '-f', join(repo, 'knative/samples/swarm.yaml')], 1, 'swarm: POST http://127.0.0.1:9/ failed'],
  ])('as a process, %s: the same line and exit code', async (_what, argv, code, start) => {
    const result = await runSwarm(argv);
    expect(result.code).toBe(code);
    expect(result.stdout.toString()).toBe('');
    expect(result.stderr.startsWith(start)).toBe(true);
    expect(result.stderr.split('\n')).toHaveLength(2);
  }, 60_000);
});
