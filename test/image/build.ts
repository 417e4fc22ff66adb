// The images, built from the repo's Dockerfile by a real builder (buildah) on
// a machine with no Docker engine, and exported as OCI archives for
// containerd (`ctr images import`). Cached by a hash of every build input
// (Dockerfile, .dockerignore, the context files it lets through, the base
// image's recipe), so a warm run returns the archives without building.
//
// Names: docker.io/library/swarm:dev-<hash12> and
// docker.io/library/swarm-worker:dev-<hash12> (`ensureImages`), and on request
// (`ensureTargets`) swarm-worker-go and swarm-worker-python, the Go and Python
// reference workers, each built only when asked. A non-`latest` tag, so the
// kubelet's default pull policy is IfNotPresent and it never tries a registry;
// the content hash in the tag means a pod always runs the tree it was built from.
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { acquireLock } from '../controlplane/build.js';
import { ensureHostPackages, IMAGE_PACKAGES } from '../prereqs.js';
import { buildah, cleanup, imageCacheDir, run, type ProgressFn } from './buildah.js';
import { baseImageFor, ensureBaseImage } from './base.js';
import { ensureGoBase, ensurePythonBase, goBaseFor, pythonBaseFor } from './language-bases.js';
import { readDockerfile } from './dockerfile.js';
import { dockerignore, inputsHash, type ContextFile } from './inputs.js';

export type { ProgressFn } from './buildah.js';

export interface ImageArchive {
  /** The image's name inside the archive (what `ctr images import` tags and a pod spec names). */
  readonly name: string;
  /** An OCI archive (oci-archive tar). */
  readonly archive: string;
  readonly bytes: number;
}

export interface Images {
  readonly functions: ImageArchive;
  readonly worker: ImageArchive;
}

export const TARGETS = {
  functions: 'docker.io/library/swarm',
  worker: 'docker.io/library/swarm-worker',
  'worker-go': 'docker.io/library/swarm-worker-go',
  'worker-python': 'docker.io/library/swarm-worker-python',
} as const;
export type Target = keyof typeof TARGETS;
const NODE_TARGETS = ['functions', 'worker'] as const;

const repoRoot = resolve(import.meta.dirname, '../..');
const stderrProgress: ProgressFn = (line) => process.stderr.write(`[image] ${line}\n`);

export interface EnsureOptions {
  /** The build context (default: the repo root). */
  readonly context?: string;
}

/** Every file of the context that .dockerignore lets through. */
export function contextFiles(context: string): ContextFile[] {
  const ignorePath = join(context, '.dockerignore');
  const ignoreText = existsSync(ignorePath) ? readFileSync(ignorePath, 'utf8') : '';
  const ignored = dockerignore(ignoreText);
  // A `!` line can re-include something under an ignored directory: then walk everything.
  const prune = !/^\s*!/m.test(ignoreText);
  const files: ContextFile[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(join(context, dir), { withFileTypes: true })) {
      const path = dir ? `${dir}/${entry.name}` : entry.name;
      const skip = ignored(path);
      if (entry.isDirectory()) {
        if (!(skip && prune)) walk(path);
      } else if (!skip) {
        const full = join(context, path);
        const mode = lstatSync(full).mode;
        const content = entry.isSymbolicLink() ? Buffer.from(`-> ${readlinkSync(full)}`) : readFileSync(full);
        files.push({ path, mode, content });
      }
    }
  };
  walk('');
  return files;
}

/**
 * The host's CA bundle, when npm here is told to use one (a TLS-inspecting
 * egress, say): the Dockerfile's `RUN npm ci` steps get it bind-mounted with a
 * global npmrc naming it, for that step only, so the Dockerfile stays as is.
 */
async function hostCaMounts(target: Target): Promise<string[]> {
  const configured = (await run('npm', ['config', 'get', 'cafile']).catch(() => '')).trim();
  const ca = [configured, process.env.NODE_EXTRA_CA_CERTS ?? ''].find((p) => p && p !== 'null' && p !== 'undefined' && existsSync(p));
  if (!ca) return [];
  // The Go target's `go mod download` reads the system bundle; the Python
  // target's pip, the bundle its pip.conf names.
  if (target === 'worker-go') return ['-v', `${ca}:/etc/ssl/certs/ca-certificates.crt:ro`];
  if (target === 'worker-python') {
    const pipConf = join(imageCacheDir(), 'build-pip.conf');
    await writeFile(pipConf, '[global]\ncert = /usr/local/etc/host-ca.crt\n');
    return ['-v', `${pipConf}:/etc/pip.conf:ro`, '-v', `${ca}:/usr/local/etc/host-ca.crt:ro`];
  }
  const npmrc = join(imageCacheDir(), 'build-npmrc');
  await writeFile(npmrc, 'cafile=/usr/local/etc/host-ca.crt\n');
  return ['-v', `${npmrc}:/usr/local/etc/npmrc:ro`, '-v', `${ca}:/usr/local/etc/host-ca.crt:ro`];
}

/**
 * Runs `fn` holding the image lock (buildah's storage is shared by every
 * process using this cache). Before and after (even when `fn` failed, or a
 * previous holder was killed) removes every working container and unmounts
 * what is left.
 */
export async function withImageLock<T>(onProgress: ProgressFn, fn: () => Promise<T>): Promise<T> {
  if (!ensureHostPackages(IMAGE_PACKAGES)) throw new Error('buildah and debootstrap are needed to build the images (see above)');
  await mkdir(imageCacheDir(), { recursive: true });
  const release = await acquireLock(join(imageCacheDir(), '.lock'), onProgress, 'image build');
  try {
    await cleanup();
    return await fn();
  } finally {
    await cleanup();
    await release();
  }
}

/**
 * Builds both Node targets of the Dockerfile (or returns the cached archives
 * of the same inputs). Safe to call from several processes at once.
 */
export function ensureImages(onProgress: ProgressFn = stderrProgress, options: EnsureOptions = {}): Promise<Images> {
  return withImageLock(onProgress, () => buildImages(onProgress, options));
}

/** `ensureImages` for a caller that holds the image lock. */
export function buildImages(onProgress: ProgressFn, options: EnsureOptions = {}): Promise<Images> {
  return buildTargets(NODE_TARGETS, onProgress, options);
}

/** `ensureImages` for any of the Dockerfile's targets (e.g. the Go and Python workers'). */
export function ensureTargets<T extends Target>(targets: readonly T[], onProgress: ProgressFn = stderrProgress, options: EnsureOptions = {}): Promise<Record<T, ImageArchive>> {
  return withImageLock(onProgress, () => buildTargets(targets, onProgress, options));
}

/** The base image each target's stages start from, built unless already there. */
function ensureBaseOf(target: Target, versions: ReturnType<typeof readDockerfile>, onProgress: ProgressFn): Promise<unknown> {
  if (target === 'worker-go') return ensureGoBase(required(versions.goVersion, 'GO_VERSION'), onProgress);
  if (target === 'worker-python') return ensurePythonBase(required(versions.pythonVersion, 'PYTHON_VERSION'), onProgress);
  return ensureBaseImage(versions.nodeVersion, onProgress);
}

function required(value: string | undefined, arg: string): string {
  if (!value) throw new Error(`Dockerfile: no \`ARG ${arg}=\``);
  return value;
}

async function buildTargets<T extends Target>(targets: readonly T[], onProgress: ProgressFn, options: EnsureOptions): Promise<Record<T, ImageArchive>> {
  const context = options.context ?? repoRoot;
  const dockerfile = readFileSync(join(context, 'Dockerfile'), 'utf8');
  const versions = readDockerfile(dockerfile);
  // Every base recipe's key (computed, not built): a changed recipe rebuilds every image.
  const bases = {
    base: baseImageFor(versions.nodeVersion).key,
    ...(versions.goVersion ? { goBase: goBaseFor(versions.goVersion).key } : {}),
    ...(versions.pythonVersion ? { pythonBase: pythonBaseFor(versions.pythonVersion).key } : {}),
  };
  const hash = inputsHash({ ...bases, dockerfile }, contextFiles(context)).slice(0, 12);
  const dir = join(imageCacheDir(), `images-${hash}`);
  const archives = {} as Record<T, ImageArchive>;
  for (const target of targets) {
    const name = `${TARGETS[target]}:dev-${hash}`;
    const archive = join(dir, `${target}.oci.tar`);
    archives[target] = { name, archive, bytes: existsSync(archive) ? (await stat(archive)).size : 0 };
  }
  const missing = targets.filter((target) => archives[target].bytes === 0);
  if (missing.length === 0) {
    onProgress(`images ${hash} cached (${dir})`);
    return archives;
  }
  await mkdir(dir, { recursive: true });
  for (const target of missing) {
    await ensureBaseOf(target, versions, onProgress);
    const { name, archive } = archives[target];
    const started = Date.now();
    onProgress(`buildah bud --target ${target} -t ${name}`);
    try {
      await buildah(
        ['bud', '--pull=never', '--network', 'host', '--layers', '--force-rm', ...(await hostCaMounts(target)),
          '--target', target, '-t', name, '-f', join(context, 'Dockerfile'), context],
        { label: `build ${target}`, onProgress: (line) => onProgress(line.replace(/\s+/g, ' ')) },
      );
    } catch (error) {
      throw new Error(`the Dockerfile's ${target} target does not build:\n${(error as Error).message}`, { cause: error });
    }
    const partial = `${archive}.partial`;
    await rm(partial, { force: true });
    await buildah(['push', '--quiet', name, `oci-archive:${partial}:${name}`]);
    await rename(partial, archive);
    archives[target] = { name, archive, bytes: (await stat(archive)).size };
    onProgress(`${target}: built in ${Math.round((Date.now() - started) / 1000)} s, archive ${mb(archives[target].bytes)}`);
  }
  await forgetOlder(hash);
  return archives;
}

/** Keeps the cache and storage bounded: the archives and tags of the current and the three previous builds (several trees may share this cache). */
async function forgetOlder(hash: string): Promise<void> {
  const cache = imageCacheDir();
  const dirs = (await readdir(cache)).filter((d) => d.startsWith('images-') && d !== `images-${hash}`);
  const others = await Promise.all(dirs.map(async (d) => ({ d, t: (await stat(join(cache, d))).mtimeMs })));
  others.sort((a, b) => b.t - a.t);
  const keep = new Set([hash, ...others.slice(0, 3).map(({ d }) => d.slice('images-'.length))]);
  for (const { d } of others.slice(3)) await rm(join(cache, d), { recursive: true, force: true });
  for (const name of (await buildah(['images', '--format', '{{.Name}}:{{.Tag}}'])).split('\n')) {
    const tag = /\/swarm(?:-worker(?:-go|-python)?)?:dev-([0-9a-f]{12})$/.exec(name.trim())?.[1];
    if (tag && !keep.has(tag)) await buildah(['rmi', name.trim()]).catch(() => '');
  }
}

export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
