// The images the real node needs before any pod runs, built without a
// registry and cached next to the binaries: the pause (sandbox) image,
// compiled from build/pause/linux/pause.c of the pinned kubernetes module,
// and the CoreDNS image around the pinned coredns binary.
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, copyFile, mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { ProgressFn } from './build.js';
import { acquireLock, binPath, cacheRoot, ensureBuilt, kubernetesModuleDir, readPins, stderrProgress } from './build.js';
import { writeOciArchive } from './oci.js';

const run = promisify(execFile);

/** A named OCI archive, as `ctr images import` takes it. */
export interface ImageArchive {
  readonly name: string;
  readonly path: string;
}

export interface NodeImages {
  readonly pause: ImageArchive;
  readonly coredns: ImageArchive;
}

/** Bumped when the way these images are assembled changes. */
const IMAGES_REVISION = 1;

export function nodeImageNames(pins = readPins()): { pause: string; coredns: string } {
  return { pause: `localhost/swarm/pause:${pins.kubernetes}`, coredns: `localhost/swarm/coredns:${pins.coredns}` };
}

function imagesDir(): string {
  const pins = readPins();
  // The binaries' own cache paths carry their tools' keys (version, Go, flags).
  const key = JSON.stringify({ revision: IMAGES_REVISION, coredns: binPath('coredns'), kubernetes: pins.kubernetes });
  return join(cacheRoot(), `node-images-${createHash('sha256').update(key).digest('hex').slice(0, 12)}`);
}

/** Builds (once) and returns the pause and CoreDNS image archives. */
export async function ensureNodeImages(onProgress: ProgressFn = stderrProgress): Promise<NodeImages> {
  const names = nodeImageNames();
  const dir = imagesDir();
  const images: NodeImages = {
    pause: { name: names.pause, path: join(dir, 'pause.tar') },
    coredns: { name: names.coredns, path: join(dir, 'coredns.tar') },
  };
  const marker = join(dir, 'done.json');
  if (existsSync(marker)) return images;
  await ensureBuilt(onProgress, ['kubernetes', 'coredns']);
  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, '.lock'), onProgress, 'node image build');
  try {
    if (existsSync(marker)) return images;
    const started = Date.now();
    onProgress('node images: compiling pause.c and writing the pause and CoreDNS images');
    const work = await mkdtemp(join(dir, '.work-'));
    try {
      const pauseRoot = join(work, 'pause');
      await mkdir(pauseRoot);
      const source = join(await kubernetesModuleDir(onProgress), 'build', 'pause', 'linux', 'pause.c');
      // As upstream's Makefile: a static binary, version stamped in.
      await run('gcc', ['-Os', '-Wall', '-Werror', '-static', `-DVERSION=${readPins().kubernetes}`, '-o', join(pauseRoot, 'pause'), source]).catch(
        (error: { stderr?: string }) => {
          throw new Error(`compiling ${source} failed (needs gcc and libc6-dev): ${error.stderr ?? String(error)}`);
        },
      );
      await writeOciArchive(names.pause, pauseRoot, { entrypoint: ['/pause'], user: '65535:65535' }, `${images.pause.path}.tmp`);
      await rename(`${images.pause.path}.tmp`, images.pause.path);

      const corednsRoot = join(work, 'coredns');
      await mkdir(corednsRoot);
      await copyFile(binPath('coredns'), join(corednsRoot, 'coredns'));
      await chmod(join(corednsRoot, 'coredns'), 0o755);
      await writeOciArchive(names.coredns, corednsRoot, { entrypoint: ['/coredns'] }, `${images.coredns.path}.tmp`);
      await rename(`${images.coredns.path}.tmp`, images.coredns.path);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    await writeFile(marker, JSON.stringify({ ...names, builtAt: new Date().toISOString() }) + '\n');
    onProgress(`node images: done in ${Math.round((Date.now() - started) / 1000)}s`);
  } finally {
    await release();
  }
  return images;
}
