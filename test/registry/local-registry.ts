// A CNCF Distribution registry (github.com/distribution/distribution/v3,
// built from its pinned Go module into the swarm cache on first use) on a
// loopback port, plain HTTP, its storage in a temporary directory: what a
// release is pushed to in tests. `stop` ends the process it started and
// removes the storage. With `forNode`, the real node's containerd pulls from
// it too: a hosts.toml (plain HTTP) in containerd's registry config_path,
// which containerd reads at each pull; `stop` removes it (the node's own
// teardown would anyway: it lives under the node's runtime directory).
import { spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureBuilt, type ProgressFn } from '../controlplane/build.js';
import { nodeLayout, registryHostsToml } from '../controlplane/node-config.js';
import { freePort } from '../controlplane/ports.js';

export interface LocalRegistry {
  /** host:port, for image references (`127.0.0.1:5123/swarm/swarm@sha256:…`). */
  readonly address: string;
  stop(): Promise<void>;
}

export async function startRegistry(onProgress: ProgressFn, options: { forNode?: boolean } = {}): Promise<LocalRegistry> {
  const binary = (await ensureBuilt(onProgress, ['registry'])).registry!;
  const dir = await mkdtemp(join(tmpdir(), 'swarm-registry-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const config = join(dir, 'config.yml');
  await writeFile(
    config,
    ['version: 0.1', 'log:', '  level: warn', 'storage:', '  filesystem:', `    rootdirectory: ${join(dir, 'data')}`, 'http:', `  addr: ${address}`, ''].join('\n'),
  );
  const child = spawn(binary, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-4000)));
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  const hosts = join(nodeLayout().registryHostsDir, address);
  const stop = async (): Promise<void> => {
    if (options.forNode) await rm(hosts, { recursive: true, force: true });
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(dir, { recursive: true, force: true });
  };
  for (const started = Date.now(); Date.now() - started < 20_000; ) {
    if (child.exitCode !== null) break;
    if (await fetch(`http://${address}/v2/`).then((r) => r.ok, () => false)) {
      if (options.forNode) {
        await mkdir(hosts, { recursive: true });
        await writeFile(join(hosts, 'hosts.toml'), registryHostsToml(address));
      }
      onProgress(`registry ${address} serving (storage ${dir}${options.forNode ? `; the node's containerd pulls from it: ${hosts}/hosts.toml` : ''})`);
      return { address, stop };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  await stop();
  throw new Error(`the registry did not start on ${address}: ${stderr}`);
}
