// Pushes release layouts (dev/release/oci-layout.ts) to a registry the way
// npm run release does, and reads back what the registry serves: the manifest
// by digest hashes to that digest, and the version tag resolves to it. So the
// digests written into swarm.yaml are the ones the registry holds.
import { createHash } from 'node:crypto';
import type { ProgressFn } from '../controlplane/build.js';
import { pushLayout } from '../../dev/release/push.js';

export interface Pushed {
  readonly name: string;
  readonly digest: string;
  /** sha256 of the manifest bytes the registry serves for `digest`. */
  readonly servedDigest: string;
  /** Docker-Content-Digest of the version tag. */
  readonly tagDigest: string;
}

const ACCEPT = 'application/vnd.oci.image.manifest.v1+json, application/vnd.docker.distribution.manifest.v2+json';

export async function pushAndReadBack(address: string, path: string, version: string, layouts: readonly { name: string; dir: string; digest: string }[], onProgress: ProgressFn): Promise<Pushed[]> {
  const pushed: Pushed[] = [];
  for (const { name, dir, digest } of layouts) {
    await pushLayout(dir, `${address}/${path}/${name}`, version, digest, onProgress, { plainHttp: true });
    const byDigest = await fetch(`http://${address}/v2/${path}/${name}/manifests/${digest}`, { headers: { accept: ACCEPT } });
    const body = Buffer.from(await byDigest.arrayBuffer());
    const byTag = await fetch(`http://${address}/v2/${path}/${name}/manifests/${version}`, { method: 'HEAD', headers: { accept: ACCEPT } });
    pushed.push({
      name,
      digest,
      servedDigest: `sha256:${createHash('sha256').update(body).digest('hex')}`,
      tagDigest: byTag.headers.get('docker-content-digest') ?? `(HTTP ${byTag.status})`,
    });
  }
  return pushed;
}
