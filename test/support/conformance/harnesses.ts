// Each SDK's conformance harness as a command the runner spawns. The Go
// harness is built into the cache outside the clone (Go's own build cache
// makes a rebuild of unchanged sources take a second), one binary per clone
// (worktrees share the cache: one clone's build must not replace another's
// while it runs); the Python one runs
// from the clone's sources in the venv test/prereqs.ts keeps for the SDK's
// dependencies (python-venv.ts).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../../controlplane/build.js';
import { ensurePythonVenv } from './python-venv.js';
import type { Harness } from './run-scenario.js';

export const REPO = join(import.meta.dirname, '..', '..', '..');

export function typescriptHarness(): Harness {
  return { sdk: 'ts', command: process.execPath, args: ['--import', 'tsx', join(REPO, 'sdk/typescript/conformance-harness.ts')], cwd: REPO };
}

export function goHarness(progress: (line: string) => void = () => undefined): Harness {
  const out = join(cacheRoot(), 'sdk-harnesses');
  mkdirSync(out, { recursive: true });
  const binary = join(out, `go-conformance-harness-${createHash('sha256').update(REPO).digest('hex').slice(0, 12)}`);
  progress('building the Go SDK harness (go build, cached)');
  const built = spawnSync('go', ['build', '-o', binary, './cmd/conformance-harness'], { cwd: join(REPO, 'sdk/go'), encoding: 'utf8' });
  if (built.status !== 0) throw new Error(`go build of the Go SDK harness failed:\n${built.stderr}`);
  return { sdk: 'go', command: binary, args: [] };
}

export function pythonHarness(progress: (line: string) => void = () => undefined): Harness {
  const python = ensurePythonVenv(progress);
  return { sdk: 'py', command: python, args: [join(REPO, 'sdk/python/conformance_harness.py')], env: { PYTHONPATH: join(REPO, 'sdk/python/src') } };
}
