// The release before this tree's (the last one RELEASES.json records), as its
// users run it, for the upgrade test: its tree at its commit (`git archive`,
// then its own `npm ci`), its images built by its own test/image from its own
// Dockerfile, and deployed with its own `npm run deploy`. The tree and the
// image archives are cached by commit outside the clone
// (<swarm cache>/release-<version>-<commit12>/): a warm run builds nothing.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { lastRelease, parseReleases, type ReleaseRecord } from '../../dev/release/record.js';
import { acquireLock, cacheRoot, type ProgressFn } from '../controlplane/build.js';
import { binPath, repoRoot } from '../controlplane/cluster.js';

const run = promisify(execFile);

export interface PreviousRelease {
  readonly version: string;
  readonly commit: string;
  /** Its tree, with its node_modules. */
  readonly tree: string;
  /** Its two images as OCI archives, and the name each archive holds. */
  readonly images: { readonly functions: ImageArchive; readonly worker: ImageArchive };
}
export interface ImageArchive {
  readonly name: string;
  readonly archive: string;
}

/** The last recorded release (RELEASES.json), built on first use. */
export async function previousRelease(progress: ProgressFn): Promise<PreviousRelease> {
  const record = lastRelease(parseReleases(readFileSync(join(repoRoot, 'RELEASES.json'), 'utf8')));
  if (!record) throw new Error('RELEASES.json records no release');
  const dir = join(cacheRoot(), `release-${record.version}-${record.commit.slice(0, 12)}`);
  await mkdir(dir, { recursive: true });
  const unlock = await acquireLock(join(dir, '.lock'), progress, `build of release v${record.version}`);
  try {
    const tree = await ensureTree(record, join(dir, 'tree'), progress);
    const images = await ensureImages(record, tree, dir, progress);
    return { version: record.version, commit: record.commit, tree, images };
  } finally {
    await unlock();
  }
}

/** Its files at its commit (from this clone's history), and its own dependencies installed. */
async function ensureTree(record: ReleaseRecord, tree: string, progress: ProgressFn): Promise<string> {
  const done = join(tree, '.swarm-release-tree');
  if (existsSync(done)) return tree;
  const started = Date.now();
  await rm(tree, { recursive: true, force: true });
  await mkdir(tree, { recursive: true });
  progress(`v${record.version}: its tree at ${record.commit.slice(0, 12)} (git archive) and its npm ci …`);
  await run('sh', ['-c', `git archive --format=tar ${record.commit} | tar -x -C "${tree}"`], { cwd: repoRoot, maxBuffer: 64 * 1024 * 1024 });
  const ticker = setInterval(() => progress(`v${record.version}: npm ci still running`), 30_000);
  await run('npm', ['ci', '--no-audit', '--no-fund', '--ignore-scripts'], { cwd: tree, maxBuffer: 64 * 1024 * 1024 }).finally(() => clearInterval(ticker));
  await writeFile(done, `${record.commit}\n`);
  progress(`v${record.version}: tree ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return tree;
}

/** Its images, built by its own test/image (buildah, from its Dockerfile), copied next to its tree. */
async function ensureImages(record: ReleaseRecord, tree: string, dir: string, progress: ProgressFn): Promise<PreviousRelease['images']> {
  const file = join(dir, 'images.json');
  if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as PreviousRelease['images'];
  const started = Date.now();
  progress(`v${record.version}: building its images with its own test/image (minutes on a cold cache) …`);
  const ticker = setInterval(() => progress(`v${record.version}: image build still running`), 30_000);
  const script = join(tree, '.swarm-build-images.ts');
  await writeFile(script, "import { ensureImages } from './test/image/build.js';\nprocess.stdout.write(JSON.stringify(await ensureImages()));\n");
  const { stdout } = await run(join(tree, 'node_modules', '.bin', 'tsx'), [script], { cwd: tree, maxBuffer: 64 * 1024 * 1024 }).finally(() => clearInterval(ticker));
  const built = JSON.parse(stdout.slice(stdout.indexOf('{'))) as Record<'functions' | 'worker', ImageArchive>;
  const images = {} as Record<'functions' | 'worker', ImageArchive>;
  for (const image of ['functions', 'worker'] as const) {
    const archive = join(dir, `${image}.tar`);
    await copyFile(built[image].archive, archive);
    images[image] = { name: built[image].name, archive };
  }
  await writeFile(file, JSON.stringify(images, null, 2));
  progress(`v${record.version}: images ready in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  return images;
}

/** Copies an OCI archive to `ref` (a plain-HTTP registry's host:port/path:tag); answers the manifest digest it holds. */
export async function pushArchive(archive: string, ref: string): Promise<string> {
  await run('skopeo', ['copy', '--quiet', '--dest-tls-verify=false', `oci-archive:${archive}`, `docker://${ref}`], { maxBuffer: 16 * 1024 * 1024 });
  return (await run('skopeo', ['inspect', '--tls-verify=false', '--format', '{{.Digest}}', `docker://${ref}`])).stdout.trim();
}

/** `npm run deploy` of the release's own tree: its CRD, its installation, `--image` its functions, each namespace enabled. */
export async function deployPrevious(previous: PreviousRelease, kubeconfig: string, image: string, namespaces: readonly string[], progress: ProgressFn): Promise<void> {
  const watch = namespaces.flatMap((ns) => ['--watch-namespace', ns]);
  const { stdout } = await run(join(previous.tree, 'node_modules', '.bin', 'tsx'), ['bin/deploy.ts', 'deploy', '--kubeconfig', kubeconfig, '--kubectl', binPath('kubectl'), '--image', image, ...watch], {
    cwd: previous.tree,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`v${previous.version}'s npm run deploy failed: ${error.stderr?.trim() || error.message}`);
  });
  for (const line of stdout.trim().split('\n')) progress(`v${previous.version} deploy: ${line}`);
}
