// The kubelet's ConfigMap volume layout, reproduced in a temp dir: files live in
// a timestamped directory, `..data` points at it, and `config.yml` is a symlink
// to `..data/config.yml`. An update writes a new directory and renames a fresh
// symlink over `..data` (kubernetes pkg/volume/util/atomic_writer.go).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mkdtempSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchConfigFile, type ConfigFileWatcher } from '../../sdk/typescript/src/watch.js';
import { writeVolume } from '../support/conformance/config-dir.js';

/** Deliveries as a queue the test awaits one by one (no sleeps, no timing). */
function collector(): { onText: (text: string | undefined) => void; next: () => Promise<string | undefined>; seen: (string | undefined)[] } {
  const seen: (string | undefined)[] = [];
  const waiting: ((text: string | undefined) => void)[] = [];
  let read = 0;
  return {
    seen,
    onText(text) {
      seen.push(text);
      waiting.shift()?.(text);
    },
    next() {
      const index = read++;
      if (index < seen.length) return Promise.resolve(seen[index]);
      return new Promise((resolve) => waiting.push(resolve));
    },
  };
}

describe('watchConfigFile over the kubelet atomic-writer layout', () => {
  let dir: string;
  let watcher: ConfigFileWatcher | undefined;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'swarm-worker-'));
  });
  afterEach(() => {
    watcher?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('delivers the current content, then each ..data swap', async () => {
    writeVolume(dir, { 'config.yml': 'version: 1\n' });
    const sink = collector();
    watcher = watchConfigFile(join(dir, 'config.yml'), sink.onText, { debounceMs: 20, pollMs: 0 });
    expect(await sink.next()).toBe('version: 1\n');

    writeVolume(dir, { 'config.yml': 'version: 2\n' });
    expect(await sink.next()).toBe('version: 2\n');

    writeVolume(dir, { 'config.yml': 'version: 3\n' });
    expect(await sink.next()).toBe('version: 3\n');
    // The user-visible name never changed: it is still the same symlink into ..data.
    expect(readlinkSync(join(dir, 'config.yml'))).toBe(join('..data', 'config.yml'));
  });

  it('reports a missing file as undefined, then picks it up when the ConfigMap appears', async () => {
    const sink = collector();
    watcher = watchConfigFile(join(dir, 'config.yml'), sink.onText, { debounceMs: 20, pollMs: 0 });
    expect(await sink.next()).toBeUndefined();

    writeVolume(dir, { 'config.yml': 'version: 1\n' });
    expect(await sink.next()).toBe('version: 1\n');
  });

  it('does not deliver a swap that leaves the content unchanged', async () => {
    writeVolume(dir, { 'config.yml': 'same\n' });
    const sink = collector();
    let reads = 0;
    let readAgain: (() => void) | undefined;
    watcher = watchConfigFile(join(dir, 'config.yml'), sink.onText, {
      debounceMs: 20,
      pollMs: 0,
      onRead: () => {
        reads++;
        readAgain?.();
      },
    });
    expect(await sink.next()).toBe('same\n');
    // Wait until the identical swap has been read (and not delivered) before the next one.
    const readsBefore = reads;
    const swapRead = new Promise<void>((resolve) => (readAgain = () => reads > readsBefore && resolve()));
    writeVolume(dir, { 'config.yml': 'same\n' });
    await swapRead;
    writeVolume(dir, { 'config.yml': 'different\n' });
    expect(await sink.next()).toBe('different\n');
    expect(sink.seen).toEqual(['same\n', 'different\n']);
  });
});
