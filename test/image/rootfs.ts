// A base image made here from a Debian rootfs (`debootstrap --variant=minbase`,
// mirror read from this machine's apt sources), never pulled: the recipe each
// base shares (node's in base.ts, golang's and python's in language-bases.ts).
// Each recipe adds what its image has beyond Debian; the rootfs is then slimmed
// as Debian's -slim images are and committed with the recipe's key as a label,
// so a changed recipe rebuilds it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { buildah, imageCacheDir, run, unmountUnder, type ProgressFn } from './buildah.js';
import { debianMirror } from './inputs.js';

export const KEY_LABEL = 'info.k8slab.swarm.base';
export const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface BasePins {
  readonly debianSuite: string;
  readonly npm: string;
}

export function readBasePins(): BasePins {
  return JSON.parse(readFileSync(join(import.meta.dirname, 'versions.json'), 'utf8')) as BasePins;
}

export interface BaseImage {
  /** The name the Dockerfile's FROM resolves to in local storage. */
  readonly name: string;
  /** Identifies what went into it; part of the images' input hash. */
  readonly key: string;
}

export interface RootfsRecipe extends BaseImage {
  readonly suite: string;
  /** Debian packages beyond minbase. */
  readonly include: readonly string[];
  /** Adds what the image has beyond Debian, into `rootfs` (done before slimming). */
  populate(rootfs: string): Promise<void>;
  /** More paths (relative to the rootfs) to delete when slimming. */
  readonly alsoRemove?: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cmd: readonly string[];
}

/** The mirror of this machine's apt sources (sources.list and sources.list.d/*.sources / *.list). */
export function machineMirror(suite: string): string {
  const dir = '/etc/apt/sources.list.d';
  const paths = [
    '/etc/apt/sources.list',
    ...(existsSync(dir) ? readdirSync(dir).filter((f) => /\.(sources|list)$/.test(f)).sort().map((f) => join(dir, f)) : []),
  ];
  const texts = paths.filter((p) => existsSync(p)).map((p) => readFileSync(p, 'utf8'));
  const mirror = debianMirror(texts, suite);
  if (!mirror) throw new Error(`no apt source for Debian ${suite} in ${paths.join(', ')}: debootstrap needs a mirror`);
  return mirror;
}

async function inspectLabels(name: string): Promise<Record<string, string> | undefined> {
  try {
    const info = JSON.parse(await buildah(['inspect', '--type', 'image', name])) as {
      OCIv1?: { config?: { Labels?: Record<string, string> } };
    };
    return info.OCIv1?.config?.Labels ?? {};
  } catch {
    return undefined;
  }
}

/** Whether local storage holds `base` made by the same recipe. */
export async function haveBase(base: BaseImage): Promise<boolean> {
  return (await inspectLabels(base.name))?.[KEY_LABEL] === base.key;
}

/** Builds `recipe`'s image into buildah's storage unless the same recipe is already there. Callers hold the image lock. */
export async function ensureRootfsImage(recipe: RootfsRecipe, onProgress: ProgressFn): Promise<BaseImage> {
  const base = { name: recipe.name, key: recipe.key };
  if (await haveBase(base)) return base;
  const started = Date.now();
  const work = join(imageCacheDir(), `base-${recipe.key}`);
  const rootfs = join(work, 'rootfs');
  const clear = async () => {
    await unmountUnder(work); // debootstrap mounts /proc and /sys in the rootfs while it runs
    await rm(work, { recursive: true, force: true });
  };
  await clear();
  await mkdir(work, { recursive: true });
  try {
    const mirror = machineMirror(recipe.suite);
    onProgress(`${recipe.name}: debootstrap --variant=minbase ${recipe.suite} (about 2 min)`);
    const include = recipe.include.length ? [`--include=${recipe.include.join(',')}`] : [];
    await run('debootstrap', ['--variant=minbase', ...include, recipe.suite, rootfs, mirror], { label: 'debootstrap', onProgress });
    onProgress(`debootstrap done in ${Math.round((Date.now() - started) / 1000)} s; populating ${recipe.name}`);
    await recipe.populate(rootfs);
    // Slim, as Debian's -slim images are: no docs (copyright files stay), man
    // pages, locales, apt lists or caches, logs, device nodes or host identity.
    await run('sh', [
      '-c',
      [
        'cd "$1"',
        'find usr/share/doc -mindepth 1 ! -name copyright ! -type d -delete',
        'find usr/share/doc -mindepth 1 -type d -empty -delete',
        'rm -rf usr/share/man/* usr/share/info/* usr/share/locale/* usr/share/groff/* usr/share/lintian/*',
        ...(recipe.alsoRemove ?? []).map((path) => `rm -rf ${path}`),
        'rm -rf var/lib/apt/lists/* var/cache/apt/*.bin var/cache/apt/archives/*.deb var/cache/debconf/*-old',
        'mkdir -p var/lib/apt/lists/partial',
        'rm -rf var/log/*.log var/log/apt/* tmp/* dev/*',
        ': > etc/resolv.conf',
        ': > etc/hostname',
      ].join(' && '),
      'slim',
      rootfs,
    ]);
    const tar = join(work, 'rootfs.tar');
    await run('tar', ['--numeric-owner', '--xattrs', '-C', rootfs, '-cf', tar, '.']);
    onProgress(`committing ${recipe.name}`);
    const container = (await buildah(['from', 'scratch'])).trim();
    try {
      await buildah(['add', '--quiet', container, tar, '/']);
      await buildah([
        'config',
        ...Object.entries(recipe.env).flatMap(([name, value]) => ['--env', `${name}=${value}`]),
        '--cmd', JSON.stringify(recipe.cmd),
        '--label', `${KEY_LABEL}=${recipe.key}`,
        container,
      ]);
      await buildah(['commit', '--quiet', '--rm', container, recipe.name]);
    } catch (error) {
      await buildah(['rm', container]).catch(() => '');
      throw error;
    }
  } finally {
    await clear();
  }
  onProgress(`base ${recipe.name} built in ${Math.round((Date.now() - started) / 1000)} s`);
  return base;
}
