// A ConfigMap volume as the kubelet lays it out (pkg/volume/util/atomic_writer.go):
// files live in a timestamped directory, `..data` points at it, and each key
// is a symlink to `..data/<key>`. An update writes a new directory and renames
// a fresh symlink over `..data`; the file is never rewritten in place.
import { existsSync, mkdirSync, readlinkSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

let generation = 0;

export function writeVolume(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  const stamp = `..${new Date().toISOString().replace(/[-:T]/g, '_').replace(/\..*/, '')}.${String(++generation).padStart(9, '0')}`;
  mkdirSync(join(dir, stamp));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, stamp, name), text);
  const dataLink = join(dir, '..data');
  const old = existsSync(dataLink) ? readlinkSync(dataLink) : undefined;
  symlinkSync(stamp, join(dir, '..data_tmp'));
  renameSync(join(dir, '..data_tmp'), dataLink);
  for (const name of Object.keys(files)) {
    if (!existsSync(join(dir, name))) symlinkSync(join('..data', name), join(dir, name));
  }
  if (old) rmSync(join(dir, old), { recursive: true });
}

/** The ConfigMap is gone: the key and the data directory disappear. */
export function clearVolume(dir: string, key: string): void {
  const dataLink = join(dir, '..data');
  if (existsSync(join(dir, key))) unlinkSync(join(dir, key));
  if (existsSync(dataLink)) {
    const old = readlinkSync(dataLink);
    unlinkSync(dataLink);
    rmSync(join(dir, old), { recursive: true, force: true });
  }
}
