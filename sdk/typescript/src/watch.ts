// Follows a file mounted from a ConfigMap volume. The kubelet never rewrites
// the file in place: it writes a new timestamped directory, points a temporary
// symlink at it and renames that over `..data` (one atomic swap), while
// `config.yml` stays a symlink to `..data/config.yml`. Watching the file itself
// would keep watching the old inode, so we watch the directory and re-read the
// path on any change there, debounced because one swap is several events.
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename, dirname } from 'node:path';

export interface ConfigFileWatcher {
  close(): void;
}

export interface WatchOptions {
  /** Quiet period after the last directory event before re-reading. */
  readonly debounceMs?: number;
  /** Safety net re-read in case an inotify event is missed (0 disables). */
  readonly pollMs?: number;
  readonly onError?: (error: unknown) => void;
  /** Called after every read, whether or not it delivered anything. */
  readonly onRead?: () => void;
}

/** The file's text, or undefined while it does not exist (an optional ConfigMap not created yet). */
export async function readConfigText(path: string): Promise<string | undefined> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}

/**
 * Calls `onText` once with the current content, then again each time the
 * content differs from what was last delivered.
 */
export function watchConfigFile(
  path: string,
  onText: (text: string | undefined) => void,
  options: WatchOptions = {},
): ConfigFileWatcher {
  const { debounceMs = 100, pollMs = 30_000, onError = () => undefined, onRead = () => undefined } = options;
  let delivered: { text: string | undefined } | undefined;
  let closed = false;
  let timer: NodeJS.Timeout | undefined;
  let reading = Promise.resolve();

  const reread = (): void => {
    // Serialise reads so deliveries keep the order of the swaps.
    reading = reading.then(async () => {
      if (closed) return;
      try {
        const text = await readConfigText(path);
        if (closed || (delivered && delivered.text === text)) return;
        delivered = { text };
        onText(text);
      } catch (error) {
        onError(error);
      } finally {
        if (!closed) onRead();
      }
    });
  };

  const schedule = (): void => {
    if (timer) clearTimeout(timer);
    timer = setTimeout(reread, debounceMs);
  };

  let watcher: FSWatcher | undefined;
  try {
    const file = basename(path);
    watcher = watch(dirname(path), (_event, name) => {
      // `..data` swaps, the timestamped dirs and the file itself all matter;
      // a null name (some platforms) means "something changed".
      if (name === null || name.startsWith('..') || name === file) schedule();
    });
    watcher.on('error', onError);
  } catch (error) {
    // No directory yet: polling alone still converges.
    onError(error);
  }
  const poll = pollMs > 0 ? setInterval(reread, pollMs) : undefined;
  poll?.unref();
  reread();

  return {
    close() {
      closed = true;
      if (timer) clearTimeout(timer);
      if (poll) clearInterval(poll);
      watcher?.close();
    },
  };
}
