// buildah (Debian's package) with its storage in the swarm cache, never in
// /var/lib or the clone. The overlay driver: several times faster than vfs
// here (vfs copies the whole tree at every Dockerfile step); its mounts exist
// only while a container does, so `cleanup` (remove every working container,
// then unmount anything left under the storage root) leaves none behind.
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../controlplane/build.js';

export type ProgressFn = (line: string) => void;

/** Everything the image build keeps: buildah's storage, downloads, archives. */
export function imageCacheDir(): string {
  return join(cacheRoot(), 'image');
}

function storageArgs(): string[] {
  const storage = join(imageCacheDir(), 'buildah');
  return ['--root', join(storage, 'root'), '--runroot', join(storage, 'run'), '--storage-driver', 'overlay'];
}

export interface RunOptions {
  /** Progress label; while the command runs, its last output line is reported every 20 s. */
  readonly label?: string;
  readonly onProgress?: ProgressFn;
  readonly cwd?: string;
}

/** Runs a command; resolves with its stdout, rejects with the tail of its output. */
export function run(command: string, args: readonly string[], options: RunOptions = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: options.cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let output = '';
    let last = '';
    const started = Date.now();
    const take = (chunk: Buffer, out: boolean): void => {
      const text = chunk.toString();
      if (out) stdout += text;
      output = (output + text).slice(-8000);
      const lines = text.split('\n').filter((line) => line.trim());
      if (lines.length) last = lines[lines.length - 1]!.trim().slice(0, 120);
    };
    child.stdout.on('data', (chunk: Buffer) => take(chunk, true));
    child.stderr.on('data', (chunk: Buffer) => take(chunk, false));
    const heartbeat =
      options.label && options.onProgress
        ? setInterval(() => options.onProgress!(`${options.label}: ${Math.round((Date.now() - started) / 1000)} s … ${last}`), 20_000)
        : undefined;
    child.on('error', (error) => {
      clearInterval(heartbeat);
      reject(error);
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} failed (${code ?? signal}):\n${output.slice(-4000)}`));
    });
  });
}

/** `buildah <args>` against the swarm cache's storage. */
export function buildah(args: readonly string[], options: RunOptions = {}): Promise<string> {
  return run('buildah', [...storageArgs(), ...args], options);
}

/** The argv prefix for running buildah yourself (e.g. a long-lived `buildah run`). */
export function buildahArgv(...args: string[]): string[] {
  return ['buildah', ...storageArgs(), ...args];
}

/** Mount points at or under `root` (default: buildah's storage), deepest first. */
export function mountsUnder(root: string = join(imageCacheDir(), 'buildah')): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) => line.split(' ')[4] ?? '')
    .filter((point) => point === root || point.startsWith(`${root}/`))
    .sort((a, b) => b.length - a.length);
}

/** Unmounts everything at or under `root`, deepest first. */
export async function unmountUnder(root: string): Promise<void> {
  for (const point of mountsUnder(root)) await run('umount', [point]).catch(() => run('umount', ['-l', point]).catch(() => ''));
}

/** Removes every working container (which unmounts it) and unmounts whatever is left under the storage root. */
export async function cleanup(): Promise<void> {
  await buildah(['rm', '--all']).catch(() => '');
  await unmountUnder(join(imageCacheDir(), 'buildah'));
}
