// The recorder's shell reading a real reference worker, run as a local process:
// its log lines are the reports the recorder rebuilds ownership from.
import { afterEach, describe, expect, it } from 'vitest';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { freePort } from '../controlplane/ports.js';
import { join } from 'node:path';
import { CoverageRecorder, lineSink } from '../support/coverage-recorder/recorder.js';
import { parseReportLine } from '../support/coverage-recorder/log-line.js';
import { eventually } from '../support/timeline.js';

const repo = join(import.meta.dirname, '..', '..');
let dir: string | undefined;
let child: ChildProcess | undefined;

afterEach(() => {
  if (child && child.exitCode === null) child.kill('SIGKILL');
  child = undefined;
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** Replaces the file in one rename, as the kubelet's `..data` swap does. */
function writeConfig(path: string, version: number, jobs: string[]): void {
  const text = `version: ${version}\nworkloads:\n  swarm-worker-0:\n    jobs: [${jobs.join(', ')}]\n    version: ${version}\n`;
  writeFileSync(`${path}.tmp`, text);
  renameSync(`${path}.tmp`, path);
}

describe('the recorder reading a reference worker (local process)', () => {
  it('rebuilds what the worker ran from its log: starts, a move, the stops on SIGTERM', async () => {
    dir = mkdtempSync(join(tmpdir(), 'swarm-coverage-'));
    const configPath = join(dir, 'config.yml');
    writeConfig(configPath, 1, ['stream:a', 'stream:b']);
    const recorder = new CoverageRecorder();
    const stamped = new CoverageRecorder();
    const raw: string[] = [];
    const port = await freePort();
    const begin = Date.now();
    child = spawn(process.execPath, ['--import', 'tsx', join(repo, 'examples/worker/main.ts')], {
      cwd: repo,
      env: { ...process.env, POD_NAME: 'swarm-worker-0', POD_UID: 'uid-0', CONFIG_PATH: configPath, PORT: String(port), LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    child.stdout!.pipe(
      lineSink((line) => {
        raw.push(line);
        recorder.ingest('local-0', line);
        // The same line as `kubectl logs --timestamps` shows it.
        stamped.ingest('local-0', `${new Date().toISOString().replace('Z', '123456Z')} ${line}`);
      }),
    );
    const exited = new Promise<number | null>((resolve) => child!.on('exit', resolve));
    const events = () => recorder.reports.map((r) => `${r.event}${r.job ? ` ${r.job}` : ''}`);

    await eventually('both jobs started', async () => events().includes('job.started stream:b'), 20_000, 50);
    writeConfig(configPath, 2, ['stream:b', 'stream:c']);
    await eventually('stream:c started', async () => events().includes('job.started stream:c'), 20_000, 50);
    const assignment = (await (await fetch(`http://127.0.0.1:${port}/assignment`)).json()) as Record<string, unknown>;
    expect(assignment).toMatchObject({ pod: 'swarm-worker-0', uid: 'uid-0', jobs: ['stream:b', 'stream:c'], version: 2, configVersion: 2, stopping: false });
    // The worker's endpoint and its own reports agree on what runs now.
    expect([...recorder.ownersAt().entries()].sort()).toEqual([
      ['stream:b', ['local-0']],
      ['stream:c', ['local-0']],
    ]);
    expect(recorder.running()).toEqual({ byPod: { 'swarm-worker-0': ['stream:b', 'stream:c'] }, duplicated: [] });

    child.kill('SIGTERM');
    expect(await exited).toBe(0);
    const end = Date.now();
    expect(events()).toEqual([
      'worker.started',
      'job.started stream:a',
      'job.started stream:b',
      'job.stopped stream:a',
      'job.started stream:c',
      'job.stopped stream:b',
      'job.stopped stream:c',
      'worker.stopped',
    ]);
    // Reports are logged whatever LOG_LEVEL says; nothing else was (warn).
    expect(raw.every((line) => parseReportLine(line) !== undefined)).toBe(true);
    expect(recorder.reports.every((r) => r.pod === 'swarm-worker-0' && r.uid === 'uid-0')).toBe(true);

    const owned = recorder.ownerships();
    expect(owned.anomalies).toEqual([]);
    expect(owned.ownerships.map((o) => [o.job, o.endedBy])).toEqual([
      ['stream:a', 'stopped'],
      ['stream:b', 'stopped'],
      ['stream:c', 'stopped'],
    ]);
    const [a, b, c] = owned.ownerships;
    expect(a!.to).toBeLessThanOrEqual(c!.from); // the move: a stopped before c started, same reload
    expect(b!.from).toBeGreaterThanOrEqual(a!.from);

    const report = recorder.report(['stream:a', 'stream:b', 'stream:c', 'stream:never'], { from: begin, to: end });
    const of = (job: string) => report.jobs.find((j) => j.job === job)!;
    expect(of('stream:never').gaps).toEqual([{ from: begin, to: end }]);
    expect(of('stream:a').gaps).toEqual([
      { from: begin, to: a!.from },
      { from: a!.to, to: end },
    ]);
    expect(of('stream:c').gaps[0]).toEqual({ from: begin, to: c!.from });
    expect(report.totals.duplicateSeconds).toBe(0);
    expect(report.jobs.every((j) => j.ownersAtEnd.length === 0)).toBe(true);

    // With the runtime's stamps: the same reports, each with the time it was logged.
    expect(stamped.reports.map(({ loggedAt, ...r }) => (expect(loggedAt).toBeGreaterThanOrEqual(r.time), r))).toEqual(recorder.reports);
    expect(stamped.clockOffsets()).toEqual({ 'local-0': 0 });
  }, 60_000);

  it('reads lines split anywhere across chunks, and a last line without a newline', async () => {
    const lines: string[] = [];
    const sink = lineSink((line) => lines.push(line));
    for (const chunk of ['{"a":', '1}\n{"b"', ':2}\n\n{"c":3}']) sink.write(chunk);
    await new Promise((resolve) => sink.end(resolve));
    expect(lines).toEqual(['{"a":1}', '{"b":2}', '{"c":3}']);
  });
});

describe('parseReportLine', () => {
  const line = '{"level":30,"time":"2026-11-22T06:00:00.250Z","event":"job.started","job":"stream:a","version":3,"pod":"swarm-worker-1","msg":"job started"}';

  it('takes the worker time and, when stamped, the runtime time with its nanoseconds', () => {
    expect(parseReportLine(line)).toEqual({ event: 'job.started', job: 'stream:a', version: 3, pod: 'swarm-worker-1', time: Date.parse('2026-11-22T06:00:00.250Z') });
    expect(parseReportLine(`2026-11-22T06:00:00.251500000Z ${line}`)?.loggedAt).toBeCloseTo(Date.parse('2026-11-22T06:00:00.251Z') + 0.5, 6);
    expect(parseReportLine(`2026-11-22T07:00:00+01:00 ${line}`)?.loggedAt).toBe(Date.parse('2026-11-22T06:00:00Z'));
  });

  it('accepts epoch-ms times (pino\'s default)', () => {
    expect(parseReportLine('{"time":1000,"event":"worker.stopped","pod":"p"}')).toEqual({ event: 'worker.stopped', pod: 'p', time: 1000 });
  });

  it('is not fooled by other lines', () => {
    expect(parseReportLine('{"level":30,"time":1,"msg":"share changed"}')).toBeUndefined();
    expect(parseReportLine('{"time":1,"event":"job.started"}')).toBeUndefined(); // no job
    expect(parseReportLine('{"time":"never","event":"worker.started"}')).toBeUndefined();
    expect(parseReportLine('{"time":1,"event":"job.exploded","job":"a"}')).toBeUndefined();
    expect(parseReportLine('npm warn something')).toBeUndefined();
    expect(parseReportLine('{"time":1,"event":"job.st')).toBeUndefined();
  });
});
