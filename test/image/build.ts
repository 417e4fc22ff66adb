// The images, built from the repo's Dockerfile by a real builder (buildah) on
// a machine with no Docker engine, and exported as OCI archives for
// containerd (`ctr images import`). Cached by a hash of every build input
// (Dockerfile, .dockerignore, the context files it lets through, the base
// image's recipe), so a warm run returns the archives without building.
//
// Names: docker.io/library/swarm:dev-<hash12> and
// docker.io/library/swarm-worker:dev-<hash12>. A non-`latest` tag, so the
// kubelet's default pull policy is IfNotPresent and it never tries a registry;
// the content hash in the tag means a pod always runs the tree it was built from.
import { existsSync, lstatSync, readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { mkdir, readdir, rename, rm, stat, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { acquireLock } from '../controlplane/build.js';
import { buildah, cleanup, imageCacheDir, run, type ProgressFn } from './buildah.js';
import { ensureBaseImage } from './base.js';
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

export const TARGETS = { functions: 'docker.io/library/swarm', worker: 'docker.io/library/swarm-worker' } as const;
type Target = keyof typeof TARGETS;

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
async function hostCaMounts(): Promise<string[]> {
  const configured = (await run('npm', ['config', 'get', 'cafile']).catch(() => '')).trim();
  const ca = [configured, process.env.NODE_EXTRA_CA_CERTS ?? ''].find((p) => p && p !== 'null' && p !== 'undefined' && existsSync(p));
  if (!ca) return [];
  const npmrc = join(imageCacheDir(), 'build-npmrc');
  await writeFile(npmrc, 'cafile=/usr/local/etc/host-ca.crt\n');
  return ['-v', `${npmrc}:/usr/local/etc/npmrc:ro`, '-v', `${ca}:/usr/local/etc/host-ca.crt:ro`];
}

/**
 * Builds both targets of the Dockerfile (or returns the cached archives of
 * the same inputs). Serialised across processes by a lock in the cache.
 */
export async function ensureImages(onProgress: ProgressFn = stderrProgress, options: EnsureOptions = {}): Promise<Images> {
  const context = options.context ?? repoRoot;
  const dockerfile = readFileSync(join(context, 'Dockerfile'), 'utf8');
  const { nodeVersion } = readDockerfile(dockerfile);
  await mkdir(imageCacheDir(), { recursive: true });
  const release = await acquireLock(join(imageCacheDir(), '.lock'), onProgress, 'image build');
  try {
    const base = await ensureBaseImage(nodeVersion, onProgress);
    const hash = inputsHash({ base: base.key, dockerfile }, contextFiles(context)).slice(0, 12);
    const dir = join(imageCacheDir(), `images-${hash}`);
    const archives = {} as Record<Target, ImageArchive>;
    for (const target of Object.keys(TARGETS) as Target[]) {
      const name = `${TARGETS[target]}:dev-${hash}`;
      const archive = join(dir, `${target}.oci.tar`);
      archives[target] = { name, archive, bytes: existsSync(archive) ? (await stat(archive)).size : 0 };
    }
    if (Object.values(archives).every((a) => a.bytes > 0)) {
      onProgress(`images ${hash} cached (${dir})`);
      return archives;
    }
    await mkdir(dir, { recursive: true });
    const mounts = await hostCaMounts();
    for (const target of Object.keys(TARGETS) as Target[]) {
      const { name, archive } = archives[target];
      const started = Date.now();
      onProgress(`buildah bud --target ${target} -t ${name}`);
      try {
        await buildah(
          ['bud', '--pull=never', '--network', 'host', '--layers', '--force-rm', ...mounts,
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
  } finally {
    await cleanup();
    await release();
  }
}

/** Keeps the cache and storage bounded: the current and the previous build's archives and tags, nothing older. */
async function forgetOlder(hash: string): Promise<void> {
  const cache = imageCacheDir();
  const dirs = (await readdir(cache)).filter((d) => d.startsWith('images-') && d !== `images-${hash}`);
  const others = await Promise.all(dirs.map(async (d) => ({ d, t: (await stat(join(cache, d))).mtimeMs })));
  others.sort((a, b) => b.t - a.t);
  const keep = new Set([hash, ...others.slice(0, 1).map(({ d }) => d.slice('images-'.length))]);
  for (const { d } of others.slice(1)) await rm(join(cache, d), { recursive: true, force: true });
  for (const name of (await buildah(['images', '--format', '{{.Name}}:{{.Tag}}'])).split('\n')) {
    const tag = /\/swarm(?:-worker)?:dev-([0-9a-f]{12})$/.exec(name.trim())?.[1];
    if (tag && !keep.has(tag)) await buildah(['rmi', name.trim()]).catch(() => '');
  }
}

export function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}
