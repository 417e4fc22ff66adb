// The API server's storage, as far as Swarm depends on it: one resourceVersion
// counter, objects by kind and key, a history of every version (a stale read
// is served from it), generation bumped on spec changes, and a watch: every
// write is reported to the listeners (the event source, the controllers, the
// kubelet). Objects are plain data, copied and frozen on the way in.
import { frozenCopy } from './frozen.js';

export type Kind = 'Swarm' | 'StatefulSet' | 'Deployment' | 'Pod' | 'Lease' | 'ConfigMap';

export interface Stored<T> {
  value: T;
  rv: number;
}

export interface WatchEvent {
  kind: Kind;
  verb: 'add' | 'update' | 'delete';
  key: string;
  /** The object as written (for a delete: its last version). */
  value: unknown;
  rv: number;
  at: number;
}

interface Version {
  rv: number;
  at: number;
  value: unknown | undefined;
}

export class Store {
  private rv = 1000;
  private readonly objects = new Map<Kind, Map<string, Stored<unknown>>>();
  private readonly history = new Map<string, Version[]>();
  private readonly listeners: Array<(e: WatchEvent) => void> = [];

  constructor(private readonly now: () => number) {}

  watch(listener: (e: WatchEvent) => void): void {
    this.listeners.push(listener);
  }

  /** Stored objects are frozen: readers get them as they are, and a reader that mutates one fails loudly. */
  get<T>(kind: Kind, key: string): Stored<T> | undefined {
    const s = this.objects.get(kind)?.get(key);
    return s ? { value: s.value as T, rv: s.rv } : undefined;
  }

  /** Direct access for the world's own controllers (not a client: no clone). */
  peek<T>(kind: Kind, key: string): T | undefined {
    return this.objects.get(kind)?.get(key)?.value as T | undefined;
  }

  list<T>(kind: Kind): Array<Stored<T>> {
    return [...(this.objects.get(kind)?.values() ?? [])] as Array<Stored<T>>;
  }

  peekAll<T>(kind: Kind): T[] {
    return [...(this.objects.get(kind)?.values() ?? [])].map((s) => s.value as T);
  }

  /** What a read served from a lagging cache returns: the object as it was at `at`. */
  getAt<T>(kind: Kind, key: string, at: number): Stored<T> | undefined {
    const versions = this.history.get(`${kind}/${key}`);
    if (!versions) return undefined;
    let found: Version | undefined;
    for (const v of versions) if (v.at <= at) found = v;
    return found && found.value !== undefined ? { value: found.value as T, rv: found.rv } : undefined;
  }

  listAt<T>(kind: Kind, at: number): Array<Stored<T>> {
    const out: Array<Stored<T>> = [];
    for (const [path] of this.history) {
      if (!path.startsWith(`${kind}/`)) continue;
      const s = this.getAt<T>(kind, path.slice(kind.length + 1), at);
      if (s) out.push(s);
    }
    return out;
  }

  /** Writes unconditionally (callers check preconditions first); returns the new version. */
  put<T>(kind: Kind, key: string, value: T): number {
    let byKey = this.objects.get(kind);
    if (!byKey) this.objects.set(kind, (byKey = new Map()));
    const verb = byKey.has(key) ? 'update' : 'add';
    const rv = ++this.rv;
    const stored = frozenCopy(value);
    byKey.set(key, { value: stored, rv });
    this.remember(kind, key, rv, stored);
    this.emit({ kind, verb, key, value: stored, rv, at: this.now() });
    return rv;
  }

  remove(kind: Kind, key: string): boolean {
    const byKey = this.objects.get(kind);
    const s = byKey?.get(key);
    if (!byKey || !s) return false;
    byKey.delete(key);
    const rv = ++this.rv;
    this.remember(kind, key, rv, undefined);
    this.emit({ kind, verb: 'delete', key, value: s.value, rv, at: this.now() });
    return true;
  }

  private remember(kind: Kind, key: string, rv: number, value: unknown): void {
    const path = `${kind}/${key}`;
    let versions = this.history.get(path);
    if (!versions) this.history.set(path, (versions = []));
    versions.push({ rv, at: this.now(), value });
    // Stale reads lag by seconds, not minutes: old versions are dropped.
    if (versions.length > 64) versions.splice(0, versions.length - 64);
  }

  private emit(e: WatchEvent): void {
    for (const l of this.listeners) l(e);
  }
}
