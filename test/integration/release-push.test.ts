// A release pushed to a real registry (CNCF Distribution on loopback, built
// from its pinned Go module) holds the digests the release names: the images
// built from the Dockerfile (test/image, as npm run release builds them),
// written as compressed OCI layouts, pushed with skopeo --preserve-digests,
// read back by digest and by tag. Needs no cluster, only the images.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeCompressedLayout } from '../../dev/release/oci-layout.js';
import { ensureImages } from '../image/build.js';
import { startRegistry, type LocalRegistry } from '../registry/local-registry.js';
import { pushAndReadBack } from '../registry/push-check.js';

const progress = (line: string) => process.stderr.write(`[release-push] ${line}\n`);
let registry: LocalRegistry | undefined;
let dir: string | undefined;
afterAll(async () => {
  await registry?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('a release pushed to a registry', () => {
  it('the registry serves, by digest and by version tag, exactly the manifests the release names', { timeout: 900_000 }, async () => {
    const images = await ensureImages(progress);
    dir = await mkdtemp(join(tmpdir(), 'swarm-release-push-'));
    const revision = '0'.repeat(40);
    const layouts = [
      { name: 'swarm', ...(await writeCompressedLayout(images.functions.archive, join(dir, 'swarm'), { version: '0.0.0-test', revision })) },
      { name: 'swarm-worker', ...(await writeCompressedLayout(images.worker.archive, join(dir, 'swarm-worker'), { version: '0.0.0-test', revision })) },
    ];
    registry = await startRegistry(progress);
    const pushed = await pushAndReadBack(registry.address, 'swarm', '0.0.0-test', layouts, progress);
    expect(pushed.map((p) => p.name)).toEqual(['swarm', 'swarm-worker']);
    for (const p of pushed) {
      expect(p.servedDigest).toBe(p.digest);
      expect(p.tagDigest).toBe(p.digest);
    }
  });
});
