// The Go and Python worker SDKs' own tests (`go test ./...` in sdk/go, pytest in
// sdk/python, in the venv test/prereqs.ts makes from sdk/python[test]), run
// with the unit tier so `npm test` keeps them green.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensurePythonVenv } from '../support/conformance/python-venv.js';

const sdk = join(import.meta.dirname, '..', '..', 'sdk');
const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) => {
  const done = spawnSync(command, args, { cwd, encoding: 'utf8', env: { ...process.env, ...env } });
  return { status: done.status, output: `${done.stdout}${done.stderr}${done.error ? String(done.error) : ''}` };
};

describe('the other SDKs\u2019 own tests', () => {
  it('go test ./... passes in sdk/go', () => {
    const done = run('go', ['test', './...'], join(sdk, 'go'));
    expect(done.output).toMatch(/^ok /m);
    expect(done.status, done.output).toBe(0);
  }, 300_000);

  it('pytest passes in sdk/python', () => {
    const python = ensurePythonVenv();
    const done = run(python, ['-m', 'pytest', '-q', '-p', 'no:cacheprovider'], join(sdk, 'python'), { PYTHONDONTWRITEBYTECODE: '1' });
    expect(done.status, done.output).toBe(0);
  }, 300_000);
});
