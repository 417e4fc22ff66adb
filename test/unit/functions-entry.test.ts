// The production entry point (the image's CMD, functions/server.ts) needs
// FUNCTION: started without it, or with a value it does not know, it says so
// on stderr and exits non-zero instead of guessing.
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { functionFromEnv } from '../../functions/app.js';

const repo = resolve(import.meta.dirname, '..', '..');

function runEntry(env: Record<string, string>): Promise<{ status: number | null; stderr: string }> {
  const { FUNCTION: _drop, ...inherited } = process.env;
  return new Promise((done) => {
    const child = execFile(
      process.execPath,
      ['--import', 'tsx', 'functions/server.ts'],
      // No cluster and no port 8080: should FUNCTION be accepted, the host binds a free loopback port.
      { cwd: repo, env: { ...inherited, PORT: '0', HOST: '127.0.0.1', KUBECONFIG: '/nonexistent', ...env }, timeout: 60_000 },
      (_err, _stdout, stderr) => done({ status: child.exitCode, stderr }),
    );
  });
}

describe('FUNCTION', () => {
  it('is parsed from the environment: assign, restart or all, nothing else', () => {
    for (const choice of ['assign', 'restart', 'all']) expect(functionFromEnv(choice)).toBe(choice);
    expect(() => functionFromEnv(undefined)).toThrow('FUNCTION is required: one of assign, restart, all');
    expect(() => functionFromEnv('')).toThrow('FUNCTION is required');
    expect(() => functionFromEnv('Assign')).toThrow('FUNCTION must be one of assign, restart, all (got "Assign")');
  });

  it.each([
    ['missing', {}, 'swarm: FUNCTION is required: one of assign, restart, all'],
    ['unknown', { FUNCTION: 'both' }, 'swarm: FUNCTION must be one of assign, restart, all (got "both")'],
  ])('%s: the entry point says so on stderr and exits non-zero', { concurrent: true, timeout: 90_000 }, async (_case, env, message) => {
    const { status, stderr } = await runEntry(env);
    expect(stderr.trim()).toBe(message);
    expect(status).toBe(1);
  });
});
