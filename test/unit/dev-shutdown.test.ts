// `npm start | tee run.log`, then Ctrl-C: tee goes first, every later write to
// stdout fails with EPIPE, and the process must still stop what it started.
// A child process stands in for npm start: it starts a detached process group
// (as the control plane's components are), keeps writing to stdout, and stops
// the group in its cleanup (dev/shutdown.ts). Its stdout is a pipe closed
// before the signal, or a file; afterwards nothing it started may be left.
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, closeSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, killGroups } from '../support/processes.js';

const shutdownModule = pathToFileURL(resolve(import.meta.dirname, '..', '..', 'dev', 'shutdown.ts')).href;
const dir = mkdtempSync(join(tmpdir(), 'swarm-shutdown-'));
const started: number[] = [];

const FIXTURE = `
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { say, stopOnSignals } from ${JSON.stringify(shutdownModule)};
const sleeper = spawn('sleep', ['600'], { detached: true, stdio: 'ignore' });
sleeper.unref();
const pause = (ms) => new Promise((r) => setTimeout(r, ms));
stopOnSignals(async () => {
  process.stdout.write('stopping\\n');
  await pause(100);
  say('still stopping\\n');
  process.kill(-sleeper.pid, 'SIGTERM');
}, { onStopping: (signal) => process.stderr.write(signal + '\\n') });
writeFileSync(process.argv[2], String(sleeper.pid));
setInterval(() => process.stdout.write('a live view line\\n'), 20);
`;
const fixture = join(dir, 'owner.mts');
writeFileSync(fixture, FIXTURE);


async function until(check: () => boolean, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 50))) if (check()) return true;
  return check();
}

afterAll(() => {
  killGroups(started);
  rmSync(dir, { recursive: true, force: true });
});

describe('dev/shutdown: a signal stops what the process started, whatever its stdout is', () => {
  it.each([
    ['SIGINT', 'a pipe closed first'],
    ['SIGTERM', 'a pipe closed first'],
    ['SIGHUP', 'a pipe closed first'],
    ['SIGINT', 'a file'],
  ] as const)('%s, stdout %s', { concurrent: true, timeout: 90_000 }, async (signal, stdoutKind) => {
    const pidFile = join(dir, `${signal}-${stdoutKind.replaceAll(' ', '-')}.pid`);
    const outFile = join(dir, `${signal}.out`);
    const out = stdoutKind === 'a file' ? openSync(outFile, 'w') : 'pipe';
    const owner = spawn(process.execPath, ['--import', 'tsx', fixture, pidFile], { stdio: ['ignore', out, 'pipe'] });
    if (typeof out === 'number') closeSync(out);
    let stderr = '';
    owner.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((r) => owner.once('exit', (code) => r(code)));

    const readPid = () => {
      try {
        return Number(readFileSync(pidFile, 'utf8')) || undefined;
      } catch {
        return undefined;
      }
    };
    expect(await until(() => readPid() !== undefined, 60_000)).toBe(true);
    const sleeper = readPid()!;
    started.push(sleeper);
    expect(alive(sleeper)).toBe(true);

    if (owner.stdout) {
      // The reader goes away (tee killed by the same Ctrl-C), and writes keep coming.
      owner.stdout.destroy();
      await new Promise((r) => setTimeout(r, 300));
      expect(owner.exitCode).toBe(null);
    }
    owner.kill(signal);

    expect(await exited).toBe(0);
    expect(stderr).toContain(signal);
    expect(await until(() => !alive(sleeper), 5_000)).toBe(true);
    if (stdoutKind === 'a file') expect(readFileSync(outFile, 'utf8')).toContain('still stopping');
  });
});
