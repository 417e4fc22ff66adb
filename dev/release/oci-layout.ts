// A release image as an OCI image layout directory (oci-layout, index.json,
// blobs/sha256/…) with every layer compressed: what a push sends, blob for
// blob, so the manifest digest written into swarm.yaml is the one the
// registry will hold (the push copies the layout with --preserve-digests).
// buildah's archives already hold gzip layers and pass through unchanged; an
// uncompressed layer (the event_display image, assembled by hand) is gzipped
// here, deterministically (the same bytes give the same blob).
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';

const UNCOMPRESSED = new Set(['application/vnd.oci.image.layer.v1.tar', 'application/vnd.docker.image.rootfs.diff.tar']);
const GZIP_LAYER = 'application/vnd.oci.image.layer.v1.tar+gzip';
const MANIFEST = 'application/vnd.oci.image.manifest.v1+json';

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
}
interface Manifest {
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
}

const sha256 = (data: Buffer): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;
const blobPath = (dir: string, digest: string): string => join(dir, 'blobs', 'sha256', digest.slice('sha256:'.length));

export interface Layout {
  readonly dir: string;
  /** The manifest's digest: what `registry/name@…` names. */
  readonly digest: string;
  /** Compressed bytes of config and layers (what a pull downloads). */
  readonly bytes: number;
}

/** Annotations of the image in index.json (they are not part of the manifest, so its digest stays the image's). */
export interface LayoutAnnotations {
  readonly version: string;
  readonly revision: string;
}

/**
 * Writes `out` (replaced if present) as an OCI layout holding the one image
 * of the OCI archive `archive`, with compressed layers.
 */
export async function writeCompressedLayout(archive: string, out: string, annotations: LayoutAnnotations): Promise<Layout> {
  const scratch = await mkdtemp(join(tmpdir(), 'swarm-layout-'));
  try {
    await promisify(execFile)('tar', ['-xf', archive, '-C', scratch]);
    const index = JSON.parse(await readFile(join(scratch, 'index.json'), 'utf8')) as { manifests: Descriptor[] };
    if (index.manifests.length !== 1) throw new Error(`${archive}: ${index.manifests.length} images, expected one`);
    const source = index.manifests[0]!;
    const manifest = JSON.parse(await readFile(blobPath(scratch, source.digest), 'utf8')) as Manifest;

    await rm(out, { recursive: true, force: true });
    await mkdir(join(out, 'blobs', 'sha256'), { recursive: true });
    let changed = false;
    const layers: Descriptor[] = [];
    for (const layer of manifest.layers) {
      if (!UNCOMPRESSED.has(layer.mediaType)) {
        await copyFile(blobPath(scratch, layer.digest), blobPath(out, layer.digest));
        layers.push(layer);
        continue;
      }
      const gz = gzipSync(await readFile(blobPath(scratch, layer.digest)), { level: 9 });
      const digest = sha256(gz);
      await writeFile(blobPath(out, digest), gz);
      layers.push({ ...layer, mediaType: GZIP_LAYER, digest, size: gz.length });
      changed = true;
    }
    await copyFile(blobPath(scratch, manifest.config.digest), blobPath(out, manifest.config.digest));
    let manifestBytes = await readFile(blobPath(scratch, source.digest));
    if (changed) manifestBytes = Buffer.from(JSON.stringify({ ...manifest, layers }));
    const digest = sha256(manifestBytes);
    await writeFile(blobPath(out, digest), manifestBytes);
    const descriptor: Descriptor = {
      mediaType: manifest.mediaType ?? MANIFEST,
      digest,
      size: manifestBytes.length,
      annotations: {
        'org.opencontainers.image.ref.name': annotations.version,
        'org.opencontainers.image.version': annotations.version,
        'org.opencontainers.image.revision': annotations.revision,
      },
    };
    await writeFile(join(out, 'index.json'), JSON.stringify({ schemaVersion: 2, mediaType: 'application/vnd.oci.image.index.v1+json', manifests: [descriptor] }));
    await writeFile(join(out, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
    return { dir: out, digest, bytes: manifest.config.size + layers.reduce((sum, l) => sum + l.size, 0) };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
