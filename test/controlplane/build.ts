// Builds the control plane binaries from pinned Go modules (through the Go
// module proxy) into a cache outside the clone, once. Each tool has its own
// scratch Go module under <cache>/<tool dir>/src; a per-tool marker file is
// written only after all of its binaries are in place, so an interrupted
// build is resumed rather than trusted. Each tool is cached under its own key
// (recipe.ts toolCacheKey), so adding or bumping one never rebuilds another.
import { execFile, execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, cp, lstat, mkdir, readFile, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { moduleHash1, pseudoVersionCommit, type ModuleFile } from './module-sum.js';
import type { BinarySpec, Pins, ToolId, ToolSpec } from './recipe.js';
import {
  KWOK_STAGE_FILES,
  KWOK_STAGE_ROOT,
  binaryFingerprint,
  goBuildArgs,
  parseGoMod,
  renderToolGoMod,
  toolCacheKey,
  toolSpecs,
} from './recipe.js';

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

/** The Go toolchain's version (`go env GOVERSION`), part of every tool's cache key. */
let goVersionMemo: string | undefined;
export function goVersion(): string {
  if (goVersionMemo) return goVersionMemo;
  try {
    goVersionMemo = execFileSync('go', ['env', 'GOVERSION'], { encoding: 'utf8' }).trim();
  } catch {
    throw new Error('the Go toolchain (`go`) is needed to build the local cluster; install Go ≥ 1.26');
  }
  return goVersionMemo;
}

/** Where one tool is built and cached: `<cache root>/<tool>-<version>-<hash of its own recipe>/`. */
export function toolDir(tool: ToolSpec, pins: Pins = readPins()): string {
  return join(cacheRoot(), toolCacheKey(pins, tool, goVersion()));
}

function toolSpec(id: ToolId, pins: Pins = readPins()): ToolSpec {
  const tool = toolSpecs(pins).find((t) => t.id === id);
  if (!tool) throw new Error(`unknown tool ${id}`);
  return tool;
}

export type BinaryName =
  | 'etcd'
  | 'kube-apiserver'
  | 'kube-controller-manager'
  | 'kube-scheduler'
  | 'kubectl'
  | 'kubelet'
  | 'kube-proxy'
  | 'kwok'
  | 'apiserver_receive_adapter'
  | 'containerd'
  | 'ctr'
  | 'containerd-shim-runc-v2'
  | 'coredns'
  | 'k8s-swarm-controller'
  | 'helm'
  | 'kube-score'
  | 'syft'
  | 'registry';

/** Absolute path of a built binary (it exists once `ensureBuilt` has returned for its tool). */
export function binPath(name: BinaryName): string {
  const pins = readPins();
  const tool = toolSpecs(pins).find((t) => t.binaries.some((b) => b.name === name));
  if (!tool) throw new Error(`no tool builds ${name}`);
  return join(toolDir(tool, pins), 'bin', name);
}

/** The pinned k8s.io/kubernetes module's source directory in the Go module cache (after the kubernetes build). */
export async function kubernetesModuleDir(onProgress: ProgressFn = stderrProgress): Promise<string> {
  const tool = toolSpec('kubernetes');
  const downloaded = await downloadModule(tool, join(toolDir(tool), 'src'), onProgress);
  return downloaded.Dir;
}

/** Directory holding the KWOK Stage definitions copied from the pinned kwok module. */
export function kwokStagesDir(): string {
  return join(toolDir(toolSpec('kwok')), 'kwok-stages');
}

/** Absolute paths of the KWOK stage files a cluster runs. */
export function kwokStageFiles(): string[] {
  return KWOK_STAGE_FILES.map((file) => join(kwokStagesDir(), file));
}

/** The tools a cluster without a real node needs (SWARM_REAL_NODE=0). */
export const CONTROL_PLANE_TOOLS: readonly ToolId[] = ['etcd', 'kubernetes', 'kwok'];
/** The tools a running cluster needs; the ApiServerSource adapter is built on demand. */
export const CLUSTER_TOOLS: readonly ToolId[] = [...CONTROL_PLANE_TOOLS, 'containerd', 'coredns'];
export const ALL_TOOLS: readonly ToolId[] = [...CLUSTER_TOOLS, 'knative'];

export const stderrProgress: ProgressFn = (line) => process.stderr.write(`[controlplane] ${line}\n`);

/** What `<tool dir>/done.json` records: written only once every listed binary is in place. */
interface Marker {
  readonly module: string;
  readonly version: string;
  readonly builtAt: string;
  /** Binary name → its `binaryFingerprint` when built. */
  readonly binaries: Readonly<Record<string, string>>;
}

function readMarker(dir: string): Marker | undefined {
  try {
    return JSON.parse(readFileSync(markerPath(dir), 'utf8')) as Marker;
  } catch {
    return undefined;
  }
}

/** The binaries of `tool` not (or differently) built in `dir`. */
function missingBinaries(dir: string, tool: ToolSpec): BinarySpec[] {
  const marker = readMarker(dir);
  return tool.binaries.filter(
    (b) => marker?.binaries?.[b.name] !== binaryFingerprint(b) || !existsSync(join(dir, 'bin', b.name)),
  );
}

function complete(dir: string, tool: ToolSpec): boolean {
  return (
    missingBinaries(dir, tool).length === 0 &&
    (tool.id !== 'kwok' || KWOK_STAGE_FILES.every((file) => existsSync(join(dir, 'kwok-stages', file)))) &&
    (!tool.inOwnModule || existsSync(join(dir, 'module', 'go.mod')))
  );
}

/**
 * Builds whatever of `tools` is not in the cache yet (in that order) and
 * returns the path of every binary of those tools. Safe to call concurrently
 * from several processes: a lock directory per tool serialises its builders.
 */
export async function ensureBuilt(
  onProgress: ProgressFn = stderrProgress,
  tools: readonly ToolId[] = CLUSTER_TOOLS,
): Promise<Record<string, string>> {
  const pins = readPins();
  const wanted = tools.map((id) => toolSpec(id, pins));
  const paths = Object.fromEntries(
    wanted.flatMap((tool) => tool.binaries.map((b) => [b.name, join(toolDir(tool, pins), 'bin', b.name)])),
  );
  const missing = wanted.filter((tool) => !complete(toolDir(tool, pins), tool));
  if (missing.length === 0) return paths;

  await assertGoAvailable();
  onProgress(
    `building ${missing.map((t) => t.id).join(', ')} into ${cacheRoot()} (a cold build takes many minutes)`,
  );
  for (const tool of missing) {
    const dir = toolDir(tool, pins);
    await mkdir(dir, { recursive: true });
    // One lock per tool: another process may be building a different tool.
    const release = await acquireLock(join(dir, '.lock'), onProgress, `${tool.id} build`);
    try {
      if (!complete(dir, tool)) await buildTool(pins, dir, tool, onProgress);
    } finally {
      await release();
    }
  }
  return paths;
}

function markerPath(dir: string): string {
  return join(dir, 'done.json');
}

interface DownloadedModule {
  readonly GoMod: string;
  readonly Dir: string;
}

async function downloadModule(tool: ToolSpec, src: string, onProgress: ProgressFn): Promise<DownloadedModule> {
  await mkdir(src, { recursive: true });
  if (!existsSync(join(src, 'go.mod'))) {
    await writeFile(join(src, 'go.mod'), `module swarm.local/controlplane/${tool.id}\n\ngo 1.22\n`);
  }
  const downloaded = JSON.parse(
    await go(['mod', 'download', '-json', `${tool.module}@${tool.version}`], src, onProgress),
  ) as { GoMod?: string; Dir?: string; Error?: string };
  if (downloaded.Error || !downloaded.GoMod || !downloaded.Dir) {
    throw new Error(`go mod download ${tool.module}@${tool.version}: ${downloaded.Error ?? 'no go.mod'}`);
  }
  return { GoMod: downloaded.GoMod, Dir: downloaded.Dir };
}

async function buildTool(pins: Pins, dir: string, tool: ToolSpec, onProgress: ProgressFn): Promise<void> {
  if (tool.inOwnModule) return buildInOwnModule(pins, dir, tool, onProgress);
  const started = Date.now();
  const src = join(dir, 'src');
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });

  // The upstream go.mod says which Go version, godebug defaults and replace
  // directives the tool needs; read it from the module cache via the proxy.
  const downloaded = await downloadModule(tool, src, onProgress);
  const upstream = parseGoMod(await readFile(downloaded.GoMod, 'utf8'));
  await writeFile(join(src, 'go.mod'), renderToolGoMod(tool, upstream));
  onProgress(`${tool.id}: resolving dependencies of ${tool.module}@${tool.version}`);
  await go(['mod', 'tidy'], src, onProgress);

  const built: Record<string, string> = { ...(readMarker(dir)?.binaries ?? {}) };
  for (const binary of missingBinaries(dir, tool)) {
    const binaryStarted = Date.now();
    onProgress(`${tool.id}: compiling ${binary.name} …`);
    const tmp = join(bin, `.${binary.name}.tmp`);
    await go(goBuildArgs(pins, tool, binary, tmp), src, onProgress, binary.name, binary.env);
    await rename(tmp, join(bin, binary.name));
    built[binary.name] = binaryFingerprint(binary);
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

  const marker: Marker = { module: tool.module, version: tool.version, builtAt: new Date().toISOString(), binaries: built };
  await writeFile(markerPath(dir), JSON.stringify(marker, null, 2) + '\n');
  onProgress(`${tool.id}: done in ${seconds(started)}`);
}

/**
 * A git directory holding the original operator's history (e.g. a mirror
 * clone), for when the Go module proxy does not serve it: the commit its
 * pinned pseudo-version names is taken from there.
 */
export const ORIGINAL_GIT_DIR_ENV = 'SWARM_ORIGINAL_GIT_DIR';

/** The original operator's controller binary and its module tree (k8s/crd.yaml, k8s/configmap.yaml, …), built on first use. */
export async function originalOperator(onProgress: ProgressFn = stderrProgress): Promise<{ binary: string; moduleDir: string }> {
  const paths = await ensureBuilt(onProgress, ['original']);
  return { binary: paths['k8s-swarm-controller']!, moduleDir: join(toolDir(toolSpec('original')), 'module') };
}

/**
 * Builds a tool inside its own module tree (`<tool dir>/module`), after
 * checking that tree against the pinned sum: from the Go module proxy if it
 * serves the module, else from the git directory in $SWARM_ORIGINAL_GIT_DIR.
 */
async function buildInOwnModule(pins: Pins, dir: string, tool: ToolSpec, onProgress: ProgressFn): Promise<void> {
  const started = Date.now();
  const moduleDir = await moduleSource(tool, dir, onProgress);
  const bin = join(dir, 'bin');
  await mkdir(bin, { recursive: true });
  const built: Record<string, string> = {};
  for (const binary of tool.binaries) {
    const binaryStarted = Date.now();
    onProgress(`${tool.id}: compiling ${binary.name} from ${tool.module}@${tool.version} (its own go.mod and go.sum) …`);
    const tmp = join(bin, `.${binary.name}.tmp`);
    await go(goBuildArgs(pins, tool, binary, tmp), moduleDir, onProgress, binary.name, binary.env);
    await rename(tmp, join(bin, binary.name));
    built[binary.name] = binaryFingerprint(binary);
    onProgress(`${tool.id}: ${binary.name} built in ${seconds(binaryStarted)}`);
  }
  const marker: Marker = { module: tool.module, version: tool.version, builtAt: new Date().toISOString(), binaries: built };
  await writeFile(markerPath(dir), JSON.stringify(marker, null, 2) + '\n');
  onProgress(`${tool.id}: done in ${seconds(started)}`);
}

/** `<tool dir>/module`: the module's files, writable (the build may add go.sum lines), checked against `tool.sum`. */
async function moduleSource(tool: ToolSpec, dir: string, onProgress: ProgressFn): Promise<string> {
  const target = join(dir, 'module');
  await rm(target, { recursive: true, force: true });
  let downloaded: DownloadedModule | undefined;
  let refusal = '';
  try {
    downloaded = await downloadModule(tool, join(dir, 'src'), onProgress);
  } catch (error) {
    // go mod download -json says why in its "Error" field (e.g. the proxy's 403 Forbidden).
    refusal = (error instanceof Error ? error.message : String(error)).trim().split('\n').filter((line) => line.includes('"Error"')).join(' ');
  }
  if (downloaded) {
    await cp(downloaded.Dir, target, { recursive: true });
    await chmodTree(target);
  } else {
    const gitDir = process.env[ORIGINAL_GIT_DIR_ENV];
    if (!gitDir) {
      throw new Error(
        `${tool.module}@${tool.version}: the Go module proxy does not serve it (${refusal.trim().slice(-400) || 'go mod download failed'}); ` +
          `set ${ORIGINAL_GIT_DIR_ENV} to a git directory holding its history (a mirror clone) to build it from there, checked against the pinned sum`,
      );
    }
    const commit = pseudoVersionCommit(tool.version);
    onProgress(`${tool.id}: the Go module proxy does not serve ${tool.module}; taking commit ${commit} from ${gitDir}`);
    await mkdir(target, { recursive: true });
    const archive = join(dir, 'source.tar');
    await promisify(execFile)('git', [`--git-dir=${gitDir}`, 'archive', '--format=tar', '-o', archive, commit]);
    await promisify(execFile)('tar', ['-xf', archive, '-C', target]);
    await rm(archive, { force: true });
  }
  const sum = moduleHash1(tool.module, tool.version, await moduleFiles(target));
  if (sum !== tool.sum) {
    throw new Error(`${tool.module}@${tool.version}: its files hash to ${sum}, not the pinned ${tool.sum ?? '(none)'} (test/controlplane/versions.json)`);
  }
  onProgress(`${tool.id}: ${tool.module}@${tool.version} matches the pinned sum ${sum}`);
  return target;
}

/** The regular files under `root` (symlinks and other non-regular files never go into a module zip). */
async function moduleFiles(root: string): Promise<ModuleFile[]> {
  const files: ModuleFile[] = [];
  const walk = async (at: string): Promise<void> => {
    for (const name of await readdir(at)) {
      const path = join(at, name);
      const stat = await lstat(path);
      if (stat.isDirectory()) await walk(path);
      else if (stat.isFile()) files.push({ path: relative(root, path), content: await readFile(path) });
    }
  };
  await walk(root);
  return files;
}

/** The module cache's files are read-only; the copy is built in, so make it writable. */
export async function chmodTree(root: string): Promise<void> {
  for (const name of await readdir(root)) {
    const path = join(root, name);
    const stat = await lstat(path);
    await chmod(path, stat.mode | 0o200);
    if (stat.isDirectory()) await chmodTree(path);
  }
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
function go(
  args: string[],
  cwd: string,
  onProgress: ProgressFn,
  label?: string,
  extraEnv: Readonly<Record<string, string>> = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn('go', args, {
      cwd,
      // -mod=mod lets the scratch module update go.sum; GOFLAGS from the
      // caller (e.g. -buildvcs=false) are kept.
      env: { ...process.env, ...extraEnv, GOFLAGS: `${process.env.GOFLAGS ?? ''} -mod=mod`.trim() },
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
      else reject(new Error(`go ${args.join(' ')} (in ${cwd}) failed with ${code}:\n${(stderr || stdout).slice(-4000)}`));
    });
  });
}

/** A lock directory holding the owner's pid; a lock left by a dead process is taken over. */
export async function acquireLock(path: string, onProgress: ProgressFn, what: string): Promise<() => Promise<void>> {
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
      onProgress(`waiting for another ${what} (pid ${owner || '?'}) to finish`);
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
