// Images without a registry: a directory becomes a single-layer OCI image
// layout, archived as one tar that `ctr images import` reads. Deterministic:
// entries sorted by name, mtime 0, owner root, so the same directory always
// gives the same digests (and containerd sees an unchanged image as such).
import { createHash } from 'node:crypto';
import { lstat, readFile, readdir, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** One entry of a tar archive. */
export type TarEntry =
  | { readonly type: 'file'; readonly path: string; readonly mode: number; readonly data: Buffer }
  | { readonly type: 'dir'; readonly path: string; readonly mode: number }
  | { readonly type: 'symlink'; readonly path: string; readonly target: string };

const BLOCK = 512;

/** A ustar header; names longer than 100 bytes are split into prefix/name. */
function tarHeader(entry: TarEntry, size: number): Buffer {
  const header = Buffer.alloc(BLOCK);
  const path = entry.type === 'dir' ? `${entry.path.replace(/\/$/, '')}/` : entry.path;
  let name = path;
  let prefix = '';
  if (Buffer.byteLength(path) > 100) {
    const cut = path.lastIndexOf('/', path.length - 2);
    prefix = path.slice(0, cut);
    name = path.slice(cut + 1);
    if (cut < 0 || Buffer.byteLength(name) > 100 || Buffer.byteLength(prefix) > 155) {
      throw new Error(`path too long for a ustar archive: ${path}`);
    }
  }
  const octal = (value: number, length: number): string => value.toString(8).padStart(length - 1, '0') + '\0';
  header.write(name, 0, 100);
  header.write(octal(entry.type === 'symlink' ? 0o777 : entry.mode & 0o7777, 8), 100);
  header.write(octal(0, 8), 108); // uid
  header.write(octal(0, 8), 116); // gid
  header.write(octal(size, 12), 124);
  header.write(octal(0, 12), 136); // mtime
  header.write(' '.repeat(8), 148); // checksum placeholder
  header.write(entry.type === 'file' ? '0' : entry.type === 'dir' ? '5' : '2', 156);
  if (entry.type === 'symlink') header.write(entry.target, 157, 100);
  header.write('ustar\0', 257);
  header.write('00', 263);
  header.write(prefix, 345, 155);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return header;
}

/** A tar archive of `entries`, in the order given. */
export function tar(entries: readonly TarEntry[]): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) {
    const data = entry.type === 'file' ? entry.data : Buffer.alloc(0);
    parts.push(tarHeader(entry, data.length), data);
    const pad = (BLOCK - (data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

/** Every file, directory and symlink under `root`, as tar entries sorted by path (root itself excluded). */
export async function directoryEntries(root: string): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const name of (await readdir(join(root, relative))).sort()) {
      const path = relative ? `${relative}/${name}` : name;
      const full = join(root, path);
      const stat = await lstat(full);
      if (stat.isSymbolicLink()) entries.push({ type: 'symlink', path, target: await readlink(full) });
      else if (stat.isDirectory()) {
        entries.push({ type: 'dir', path, mode: stat.mode });
        await walk(path);
      } else if (stat.isFile()) entries.push({ type: 'file', path, mode: stat.mode, data: await readFile(full) });
      else throw new Error(`cannot put ${full} into an image: not a file, directory or symlink`);
    }
  };
  await walk('');
  return entries;
}

/** The parts of an OCI image config a container needs to run. */
export interface ImageConfig {
  readonly entrypoint?: readonly string[];
  readonly cmd?: readonly string[];
  readonly env?: readonly string[];
  readonly user?: string;
  readonly workingDir?: string;
}

const DEFAULT_PATH = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

function blob(data: Buffer): { digest: string; size: number; data: Buffer } {
  return { digest: `sha256:${createHash('sha256').update(data).digest('hex')}`, size: data.length, data };
}

/**
 * An OCI image layout (oci-layout, index.json, blobs/) with one uncompressed
 * layer holding `layer`, named `name` (e.g. `localhost/swarm/pause:v1.36.4`),
 * archived as a tar. Returns the archive and the manifest digest.
 */
export function ociArchive(name: string, layer: readonly TarEntry[], config: ImageConfig): { archive: Buffer; manifestDigest: string } {
  const layerBlob = blob(tar(layer));
  const configBlob = blob(
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {
          Env: config.env ?? [DEFAULT_PATH],
          ...(config.entrypoint ? { Entrypoint: config.entrypoint } : {}),
          ...(config.cmd ? { Cmd: config.cmd } : {}),
          ...(config.user ? { User: config.user } : {}),
          WorkingDir: config.workingDir ?? '/',
        },
        rootfs: { type: 'layers', diff_ids: [layerBlob.digest] },
      }),
    ),
  );
  const manifestBlob = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configBlob.digest, size: configBlob.size },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerBlob.digest, size: layerBlob.size }],
      }),
    ),
  );
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      {
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        digest: manifestBlob.digest,
        size: manifestBlob.size,
        annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.slice(name.lastIndexOf(':') + 1) },
      },
    ],
  };
  const blobs = [configBlob, layerBlob, manifestBlob].sort((a, b) => a.digest.localeCompare(b.digest));
  const archive = tar([
    { type: 'dir', path: 'blobs', mode: 0o755 },
    { type: 'dir', path: 'blobs/sha256', mode: 0o755 },
    ...blobs.map((b): TarEntry => ({ type: 'file', path: `blobs/sha256/${b.digest.slice(7)}`, mode: 0o644, data: b.data })),
    { type: 'file', path: 'index.json', mode: 0o644, data: Buffer.from(JSON.stringify(index)) },
    { type: 'file', path: 'oci-layout', mode: 0o644, data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })) },
  ]);
  return { archive, manifestDigest: manifestBlob.digest };
}

/** Writes the single-layer OCI archive of directory `root` to `out`. */
export async function writeOciArchive(name: string, root: string, config: ImageConfig, out: string): Promise<string> {
  const { archive, manifestDigest } = ociArchive(name, await directoryEntries(root), config);
  await writeFile(out, archive);
  return manifestDigest;
}
