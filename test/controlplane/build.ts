// Builds the control plane binaries from pinned Go modules (through the Go
// module proxy) into a cache outside the clone, once. Each tool has its own
// scratch Go module under <cache>/src/<tool>; a per-tool marker file is
// written only after all of its binaries are in place, so an interrupted
// build is resumed rather than trusted.
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pins, ToolId, ToolSpec } from './recipe.js';
import { KWOK_STAGE_FILES, KWOK_STAGE_ROOT, cacheKey, goBuildArgs, parseGoMod, renderToolGoMod, toolSpecs } from './recipe.js';

export type ProgressFn = (line: string) => void;

const here = dirname(fileURLToPath(import.meta.url));

export function readPins(): Pins {
  return JSON.parse(readFileSync(join(here, 'versions.json'), 'utf8')) as Pins;
}

/** `$SWARM_CACHE_DIR`, else `$XDG_CACHE_HOME/swarm`, else `~/.cache/swarm`. */
export function cacheRoot(): string {
  if (process.env.SWARM_CACHE_DIR) return process.env.SWARM_CACHE_DIR;
  return join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'swarm');
}

export function cacheDir(pins: Pins = readPins()): string {
  return join(cacheRoot(), cacheKey(pins));
}

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'kwok'
  | 'apiserver_receive_adapter';

/** Absolute path of a built binary (it exists once `ensureBuilt` has returned). */
export function binPath(name: BinaryName): string {
  return join(cacheDir(), 'bin', name);
}

/** Directory holding the KWOK Stage definitions copied from the pinned kwok module. */
export function kwokStagesDir(): string {
  return join(cacheDir(), 'kwok-stages');
}

/** Absolute paths of the KWOK stage files a cluster runs. */
export function kwokStageFiles(): string[] {
  return KWOK_STAGE_FILES.map((file) => join(kwokStagesDir(), file));
}

/** The tools a running cluster needs; the ApiServerSource adapter is built on demand. */
export const CLUSTER_TOOLS: readonly ToolId[] = ['etcd', 'kubernetes', 'kwok'];
export const ALL_TOOLS: readonly ToolId[] = [...CLUSTER_TOOLS, 'knative'];

const stderrProgress: ProgressFn = (line) => process.stderr.write(`[controlplane] ${line}\n`);

/**
 * Builds whatever of `tools` is not in the cache yet and returns the cache's
 * bin directory. Safe to call concurrently from several processes: a lock
 * directory per tool serialises the builders of that tool.
 */
export async function ensureBuilt(
  onProgress: ProgressFn = stderrProgress,
  tools: readonly ToolId[] = CLUSTER_TOOLS,
): Promise<string> {
  const pins = readPins();
  const dir = cacheDir(pins);
  const wanted = toolSpecs(pins).filter((tool) => tools.includes(tool.id));
  const complete = (tool: ToolSpec): boolean =>
    existsSync(markerPath(dir, tool.id)) &&
    (tool.id !== 'kwok' || KWOK_STAGE_FILES.every((file) => existsSync(join(dir, 'kwok-stages', file))));
  const missing = (): ToolSpec[] => wanted.filter((tool) => !complete(tool));
  if (missing().length === 0) return join(dir, 'bin');

  await mkdir(dir, { recursive: true });
  await assertGoAvailable();
  onProgress(`building ${missing().map((t) => t.id).join(', ')} into ${dir} (a cold build takes many minutes)`);
  for (const tool of missing()) {
    // One lock per tool: another process may be building a different tool.
    const release = await acquireLock(join(dir, `.lock-${tool.id}`), onProgress);
    try {
      if (!complete(tool)) await buildTool(pins, dir, tool, onProgress);
    } finally {
      await release();
    }
  }
  return join(dir, 'bin');
}

function markerPath(dir: string, id: ToolId): string {
  return join(dir, `${id}.done`);
}

async function buildTool(pins: Pins, dir: string, tool: ToolSpec, onProgress: ProgressFn): Promise<void> {
  const started = Date.now();
  const src = join(dir, 'src', tool.id);
  const bin = join(dir, 'bin');
  await mkdir(src, { recursive: true });
  await mkdir(bin, { recursive: true });

  // The upstream go.mod says which Go version, godebug defaults and replace
  // directives the tool needs; read it from the module cache via the proxy.
  await writeFile(join(src, 'go.mod'), `module swarm.local/controlplane/${tool.id}\n\ngo 1.22\n`);
  const downloaded = JSON.parse(
    await go(['mod', 'download', '-json', `${tool.module}@${tool.version}`], src, onProgress),
  ) as { GoMod?: string; Dir?: string; Error?: string };
  if (downloaded.Error || !downloaded.GoMod || !downloaded.Dir) {
    throw new Error(`go mod download ${tool.module}@${tool.version}: ${downloaded.Error ?? 'no go.mod'}`);
  }
  const upstream = parseGoMod(await readFile(downloaded.GoMod, 'utf8'));
  await writeFile(join(src, 'go.mod'), renderToolGoMod(tool, upstream));
  onProgress(`${tool.id}: resolving dependencies of ${tool.module}@${tool.version}`);
  await go(['mod', 'tidy'], src, onProgress);

  for (const binary of tool.binaries) {
    const binaryStarted = Date.now();
    onProgress(`${tool.id}: compiling ${binary.name} …`);
    const tmp = join(bin, `.${binary.name}.tmp`);
    await go(goBuildArgs(pins, tool, binary, tmp), src, onProgress, binary.name);
    await rename(tmp, join(bin, binary.name));
    onProgress(`${tool.id}: ${binary.name} built in ${seconds(binaryStarted)}`);
  }

  if (tool.id === 'kwok') {
    const stages = join(dir, 'kwok-stages');
    await rm(stages, { recursive: true, force: true });
    await mkdir(stages, { recursive: true });
    await cp(join(downloaded.Dir, KWOK_STAGE_ROOT), stages, {
      recursive: true,
      filter: (source) => !source.includes('/testdata') && !source.endsWith('.go'),
    });
  }

  await writeFile(
    markerPath(dir, tool.id),
    JSON.stringify({ module: tool.module, version: tool.version, builtAt: new Date().toISOString() }) + '\n',
  );
  onProgress(`${tool.id}: done in ${seconds(started)}`);
}

function seconds(since: number): string {
  return `${Math.round((Date.now() - since) / 1000)}s`;
}

async function assertGoAvailable(): Promise<void> {
  try {
    await go(['version'], process.cwd(), () => {});
  } catch {
    throw new Error('the Go toolchain (`go`) is needed to build the local control plane; install Go ≥ 1.26');
  }
}

/**
 * Runs `go` and returns stdout. While a long compile runs, prints a heartbeat
 * so that a cold build never looks hung.
 */
function go(args: string[], cwd: string, onProgress: ProgressFn, label?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('go', args, {
      cwd,
      // -mod=mod lets the scratch module update go.sum; GOFLAGS from the
      // caller (e.g. -buildvcs=false) are kept.
      env: { ...process.env, GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=mod`.trim() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const heartbeat = label
      ? setInterval(() => onProgress(`${label}: still compiling (${seconds(started)})`), 60_000)
      : undefined;
    child.on('error', (error) => {
      clearInterval(heartbeat);
      reject(error);
    });
    child.on('close', (code) => {
      clearInterval(heartbeat);
      if (code === 0) resolve(stdout);
      else reject(new Error(`go ${args.join(' ')} (in ${cwd}) failed with ${code}:\n${stderr.slice(-4000)}`));
    });
  });
}

/** A lock directory holding the owner's pid; a lock left by a dead process is taken over. */
export async function acquireLock(path: string, onProgress: ProgressFn): Promise<() => Promise<void>> {
  let announced = false;
  for (;;) {
    try {
      await mkdir(path);
      await writeFile(join(path, 'pid'), String(process.pid));
      return () => rm(path, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await readFile(join(path, 'pid'), 'utf8').catch(() => '0'));
    if (owner > 0 && !isAlive(owner)) {
      await rm(path, { recursive: true, force: true });
      continue;
    }
    if (!announced) {
      onProgress(`waiting for another build (pid ${owner || '?'}) to finish`);
      announced = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
