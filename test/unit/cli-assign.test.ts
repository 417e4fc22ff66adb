import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { run as assignCommand, type Io } from '../../bin/commands/assign.js';
import { CliError } from '../../bin/commands/cli-error.js';
import { run as planCommand } from '../../bin/commands/plan.js';
import { parse } from '../../lib/workerconfig/index.js';

const repo = new URL('../../', import.meta.url).pathname;
const seeds = join(repo, 'test/fixtures/seed-streams.txt');
const dir = mkdtempSync(join(tmpdir(), 'swarm-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function capture(stdin = ''): Io & { out: string; err: string } {
  const io = {
    out: '',
    err: '',
    stdout: (text: string) => void (io.out += text),
    stderr: (text: string) => void (io.err += text),
    stdin: async () => stdin,
  };
  return io;
}

describe('swarm assign', () => {
  it('prints config.yml for the seed streams', async () => {
    const io = capture();
    expect(await assignCommand(['--statefulset', 'swarm-worker', '--replicas', '3', '--jobs', seeds], io)).toBe(0);
    const config = parse(io.out);
    expect(config.version).toBe(1);
    expect(Object.keys(config.workloads)).toEqual(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
    expect(Object.values(config.workloads).map((s) => s.jobs.length)).toEqual([9, 9, 9]);
    expect(io.err).toBe('');
  });

  it('reads jobs from stdin, YAML objects included, and warns about unhonoured dedications', async () => {
    const io = capture('- {name: cnbc, dedicated: true}\n- {name: bbc, dedicated: true}\n- a\n');
    expect(await assignCommand(['--statefulset', 'w', '--replicas=2'], io)).toBe(0);
    expect(parse(io.out).workloads['w-0']!.jobs).toHaveLength(1);
    expect(io.err).toMatch(/^swarm: warning: dedicated job "(bbc|cnbc)" not honoured: /);
  });

  it('bumps versions against --previous, only for workers whose share changed', async () => {
    const first = capture();
    await assignCommand(['--statefulset', 'swarm-worker', '--replicas', '3', '--jobs', seeds], first);
    const previous = join(dir, 'previous.yml');
    writeFileSync(previous, first.out);
    const same = capture();
    await assignCommand(['--statefulset', 'swarm-worker', '--replicas', '3', '--jobs', seeds, '--previous', previous], same);
    expect(same.out).toBe(first.out);
    const grown = capture();
    await assignCommand(['--statefulset', 'swarm-worker', '--replicas', '4', '--jobs', seeds, '--previous', previous], grown);
    const config = parse(grown.out);
    expect(config.version).toBe(2);
    expect(config.workloads['swarm-worker-3']!.version).toBe(2);
  });

  it.each([
    [['--replicas', '2'], /^missing --statefulset/],
    [['--statefulset', 'w', '--replicas', 'two'], /^--replicas must be a non-negative integer, got "two"$/],
    [['--statefulset', 'w', '--replicas', '2', '--bogus'], /^unknown option --bogus/],
    [['--statefulset', 'w', '--replicas', '2', '--jobs', '/nonexistent/jobs'], /^cannot read \/nonexistent\/jobs: no such file$/],
  ])('rejects %j with a one-line CliError', async (argv, message) => {
    await expect(assignCommand(argv, capture('a\n'))).rejects.toThrow(message);
    await expect(assignCommand(argv, capture('a\n'))).rejects.toBeInstanceOf(CliError);
  });

  it('names duplicate jobs', async () => {
    await expect(assignCommand(['--statefulset', 'w', '--replicas', '2'], capture('a\nb\na\n'))).rejects.toThrow(/^duplicate job names: "a"$/);
  });

  it('names the line of a malformed --previous', async () => {
    const bad = join(dir, 'bad.yml');
    writeFileSync(bad, 'workloads:\n  w-0:\n    jobs: [a]\nversion: 1\n');
    await expect(assignCommand(['--statefulset', 'w', '--replicas', '2', '--previous', bad], capture('a\n'))).rejects.toThrow(
      new RegExp(`^${bad}:3:5: workloads\\.w-0\\.version: missing$`),
    );
  });
});

describe('swarm plan', () => {
  it('prints moves, the lower bound and the restart order of a resize', async () => {
    const io = capture();
    expect(await planCommand(['--statefulset', 'swarm-worker', '--replicas', '3', '--from', '2', '--jobs', seeds], io)).toBe(0);
    expect(io.out).toMatch(/^moved jobs: 9 \(lower bound 9\)\n/);
    expect(io.out).toContain('added workers (created by the StatefulSet): swarm-worker-2');
    expect(io.out).toContain('restart order (policy Restart, break-before-make):\n  1. swarm-worker-0\n  2. swarm-worker-1\n');
  });

  it('--json gives the same facts as data', async () => {
    const io = capture();
    await planCommand(['--statefulset', 'swarm-worker', '--replicas', '1', '--from', '2', '--jobs', seeds, '--json'], io);
    const report = JSON.parse(io.out) as { moved: number; lowerBound: { moves: number }; restartOrder: Array<{ worker: string }>; removedWorkers: string[] };
    expect(report.moved).toBe(13);
    expect(report.lowerBound.moves).toBe(13);
    expect(report.removedWorkers).toEqual(['swarm-worker-1']);
    expect(report.restartOrder.map((s) => s.worker)).toEqual(['swarm-worker-0']);
  });

  it('plans from a previous config.yml, keeping its job set without --jobs', async () => {
    const first = capture();
    await assignCommand(['--statefulset', 'swarm-worker', '--replicas', '4', '--jobs', seeds], first);
    const previous = join(dir, 'four.yml');
    writeFileSync(previous, first.out);
    const io = capture();
    await planCommand(['--statefulset', 'swarm-worker', '--replicas', '3', '--previous', previous, '--json'], io);
    expect((JSON.parse(io.out) as { moved: number }).moved).toBe(6);
  });

  it('needs exactly one of --previous and --from', async () => {
    await expect(planCommand(['--statefulset', 'w', '--replicas', '2'], capture())).rejects.toThrow(/^give exactly one of --previous FILE or --from N/);
  });
});

describe('./bin/swarm as a process', () => {
  it('bad input: exit code 2 and exactly one line on stderr, no stack trace', async () => {
    const child = promisify(execFile)(join(repo, 'bin/swarm'), ['assign', '--statefulset', 'w', '--replicas', '-3'], { cwd: repo });
    const failure = await child.then(
      () => undefined,
      (error: { code: number; stderr: string; stdout: string }) => error,
    );
    expect(failure?.code).toBe(2);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toBe('swarm: --replicas must be a non-negative integer, got "-3"\n');
  });
});
