// `npm start`, then SIGTERM (kill, timeout(1), systemd) or Ctrl-C: npm must
// return only once the node process has stopped what it started. The chain is
// the real one: package.json's own `start` script, run by npm, with a stand-in
// for dev/start.ts whose cleanup (dev/shutdown.ts) takes a while and leaves a
// marker at its end. The signal goes to npm alone or to its process group, and
// a second one comes while the cleanup runs.
//
// What this guards against: npm forwards SIGINT/SIGTERM only to its own child.
// Run as `tsx dev/start.ts`, that child was /bin/sh (dash does not exec the
// command), which dies of SIGTERM at once: npm then exited within milliseconds
// while the node process never got the signal (npm signalled alone) or was
// still stopping (the group signalled). `exec tsx …` is not enough either: tsx's
// signal relay SIGKILLs its child when two signals reach it together (the
// group's and npm's forward). Hence `exec node --import tsx dev/start.ts`.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { alive, killGroups } from '../support/processes.js';

const repo = resolve(import.meta.dirname, '..', '..');
const startScript = (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts.start!;
const shutdownModule = pathToFileURL(join(repo, 'dev', 'shutdown.ts')).href;
const dir = mkdtempSync(join(tmpdir(), 'swarm-start-signals-'));
const groups: number[] = [];
const CLEANUP_MS = 1500;

const STAND_IN = `
import { renameSync, writeFileSync } from 'node:fs';
import { stopOnSignals } from ${JSON.stringify(shutdownModule)};
const [ready, marker] = process.argv.slice(2);
stopOnSignals(async () => {
  await new Promise((r) => setTimeout(r, ${CLEANUP_MS}));
  writeFileSync(marker, 'stopped');
});
// Written whole, then renamed: the test polls for the file and must never read it half-written.
writeFileSync(ready + '.part', process.pid + ' ' + process.ppid);
renameSync(ready + '.part', ready);
setInterval(() => process.stdout.write('a live view line\\n'), 50);
`;
writeFileSync(join(dir, 'stand-in.ts'), STAND_IN);
symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'));
const script = startScript.replace('dev/start.ts', 'stand-in.ts');
writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'stand-in', private: true, type: 'module', scripts: { start: script } }));

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

afterAll(() => {
  killGroups(groups);
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start: a signal lets the cleanup finish before npm exits', () => {
  it('runs dev/start.ts as the stand-in replaces it', () => {
    expect(script).not.toBe(startScript);
  });

  it.each([
    ['SIGTERM', 'npm alone', false],
    ['SIGTERM', 'the process group', false],
    ['SIGTERM', 'the process group', true],
    ['SIGINT', 'the process group', false],
    ['SIGINT', 'npm alone', false],
  ] as const)('%s to %s (second signal during the cleanup: %s)', { concurrent: true, timeout: 30_000 }, async (signal, target, twice) => {
    const tag = `${signal}-${target.replaceAll(' ', '-')}-${twice}`;
    const ready = join(dir, `${tag}.ready`);
    const marker = join(dir, `${tag}.marker`);
    const npm = spawn('npm', ['start', '--', ready, marker], { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    groups.push(npm.pid!);
    let output = '';
    npm.stdout.on('data', () => undefined);
    npm.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = new Promise<{ code: number | null; signal: string | null; stopped: boolean }>((r) =>
      npm.once('exit', (code, sig) => r({ code, signal: sig, stopped: existsSync(marker) })),
    );

    for (const deadline = Date.now() + 20_000; !existsSync(ready) && Date.now() < deadline; ) await pause(50);
    expect(existsSync(ready), output).toBe(true);
    const [node, parent] = readFileSync(ready, 'utf8').split(' ').map(Number);
    // npm forwards a signal to its own child only: that must be this node process, not a shell or the tsx CLI.
    expect(parent).toBe(npm.pid);
    await pause(200);
    const send = () => process.kill(target === 'npm alone' ? npm.pid! : -npm.pid!, signal);
    const sent = Date.now();
    send();
    if (twice) {
      await pause(CLEANUP_MS / 3);
      send();
    }

    const exit = await exited;
    expect(exit, output).toEqual({ code: 0, signal: null, stopped: true });
    expect(Date.now() - sent).toBeGreaterThanOrEqual(CLEANUP_MS);
    expect(alive(node!)).toBe(false);
  });
});
