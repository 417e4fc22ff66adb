// The Python SDK's dependencies (sdk/python/pyproject.toml, with its test
// extra) in a virtual environment cached outside the clone, keyed by the
// manifest's hash: made once per machine by test/prereqs.ts (or on first use),
// so the conformance runner and pytest need nothing installed by hand.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../../controlplane/build.js';

const SDK = join(import.meta.dirname, '..', '..', '..', 'sdk', 'python');

export function pythonVenvDir(): string {
  const hash = createHash('sha256').update(readFileSync(join(SDK, 'pyproject.toml'))).digest('hex').slice(0, 12);
  return join(cacheRoot(), `python-sdk-${hash}`);
}

/** The venv's python, made (python3 -m venv, pip install sdk/python[test]) when missing. */
export function ensurePythonVenv(progress: (line: string) => void = () => undefined): string {
  const dir = pythonVenvDir();
  const python = join(dir, 'bin', 'python');
  if (existsSync(python)) return python;
  progress(`making the Python SDK's venv in ${dir} (once)`);
  const tmp = `${dir}.tmp-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  const run = (command: string, args: string[]) => {
    const done = spawnSync(command, args, { stdio: ['ignore', 'inherit', 'inherit'] });
    if (done.status !== 0) throw new Error(`${command} ${args.join(' ')} failed`);
  };
  run('python3', ['-m', 'venv', tmp]);
  run(join(tmp, 'bin', 'python'), ['-m', 'pip', 'install', '--quiet', '--disable-pip-version-check', `${SDK}[test]`]);
  renameSync(tmp, dir);
  return python;
}
