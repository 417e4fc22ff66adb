// The Go and Python example workers (examples/worker-go, examples/worker-python)
// as local processes: what their own callbacks report (the reference worker's
// report lines) rebuilds, through the coverage recorder, what they ran.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { cacheRoot } from '../controlplane/build.js';
import { freePort } from '../controlplane/ports.js';
import { ensurePythonVenv } from '../support/conformance/python-venv.js';
import { CoverageRecorder, lineSink } from '../support/coverage-recorder/recorder.js';
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

function goWorker(): [string, string[], NodeJS.ProcessEnv] {
  const out = join(cacheRoot(), 'sdk-harnesses');
  mkdirSync(out, { recursive: true });
  const built = spawnSync('go', ['build', '-o', join(out, 'example-worker-go'), '.'], { cwd: join(repo, 'examples/worker-go'), encoding: 'utf8' });
  if (built.status !== 0) throw new Error(built.stderr);
  return [join(out, 'example-worker-go'), [], {}];
}
const pythonWorker = (): [string, string[], NodeJS.ProcessEnv] => [ensurePythonVenv(), [join(repo, 'examples/worker-python/worker.py')], { PYTHONPATH: join(repo, 'sdk/python/src') }];

function writeConfig(path: string, version: number, jobs: string[]): void {
  writeFileSync(`${path}.tmp`, `version: ${version}\nworkloads:\n  swarm-worker-0:\n    jobs: [${jobs.join(', ')}]\n    version: ${version}\n`);
  renameSync(`${path}.tmp`, path);
}

describe.each([
  ['Go', goWorker],
  ['Python', pythonWorker],
])('the %s example worker (local process)', (_name, make) => {
  // Built (Go) or its venv made (Python) before the test's own timeout starts: a cold build on a busy 2-core
  // machine took longer than that (cold CI, 2026-11-29), and how long a build takes is not what this tests.
  let launch: ReturnType<typeof make>;
  beforeAll(() => {
    launch = make();
  }, 900_000);
  it('reports its starts, a move and the stops on SIGTERM in its own lines; /healthz and /readyz answer', async () => {
    const [command, args, env] = launch;
    dir = mkdtempSync(join(tmpdir(), 'swarm-example-'));
    const configPath = join(dir, 'config.yml');
    writeConfig(configPath, 1, ['stream:a', 'stream:b']);
    const port = await freePort();
    const recorder = new CoverageRecorder();
    child = spawn(command, args, {
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env, POD_NAME: 'swarm-worker-0', POD_UID: 'uid-0', CONFIG_PATH: configPath, PORT: String(port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(lineSink((line) => recorder.ingest('local-0', line)));
    let stderr = '';
    child.stderr!.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
    const exited = new Promise<number | null>((resolve) => child!.on('exit', resolve));
    const events = () => recorder.reports.map((r) => `${r.event}${r.job ? ` ${r.job}` : ''}`);
    await eventually('both jobs started', async () => events().includes('job.started stream:b') && events().includes('job.started stream:a'), 20_000, 50);
    writeConfig(configPath, 2, ['stream:b', 'stream:c']);
    await eventually('stream:c started', async () => events().includes('job.started stream:c'), 20_000, 50);
    expect((await eventually('/healthz', async () => fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined), 20_000, 100)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(200);
    child.kill('SIGTERM');
    expect(await exited, stderr).toBe(0);
    const seen = events();
    expect(seen[0]).toBe('worker.started');
    expect(seen.slice(1, 3).sort()).toEqual(['job.started stream:a', 'job.started stream:b']);
    expect(seen.slice(3, 5)).toEqual(['job.stopped stream:a', 'job.started stream:c']);
    expect(seen.slice(5, 7).sort()).toEqual(['job.stopped stream:b', 'job.stopped stream:c']);
    expect(seen[7]).toBe('worker.stopped');
    expect(recorder.reports.every((r) => r.pod === 'swarm-worker-0' && r.uid === 'uid-0')).toBe(true);
    expect(recorder.ownerships().anomalies).toEqual([]);
  }, 120_000);
});
