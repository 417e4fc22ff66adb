// Per-instance memory of config.yml as read (parsed, and rendered back), by
// ConfigMap uid+resourceVersion: an optimisation only. An entry answers only
// for the very text it was read from, so a stale or colliding key is a miss.
import type { Assignment } from '../assignment/types.js';
import { readConfig, type ConfigRead, type ConfigReader } from '../decisions/config-read.js';
import type { ConfigMapView } from '../kube/types.js';
import { assignmentOf, canonical, type WorkerConfig } from '../workerconfig/index.js';

/** Bound on the config text remembered (the parsed copies take a few times as much). */
const MAX_REMEMBERED_CHARS = 8 * 1024 * 1024;

const remembered = new Map<string, { text: string; read: ConfigRead }>();
let rememberedChars = 0;

const idOf = (configMap: ConfigMapView | undefined): string | undefined =>
  configMap?.uid && configMap.resourceVersion ? `${configMap.uid}/${configMap.resourceVersion}` : undefined;

/** `on`: false reads afresh every time (the shortcut switched off, shortcuts.ts). */
export function cachedConfigReader(configMap: ConfigMapView | undefined, on = true): ConfigReader {
  const id = idOf(configMap);
  if (!on) return readConfig;
  return (text) => {
    if (id === undefined || text === undefined) return readConfig(text);
    const hit = remembered.get(id);
    if (hit && hit.text === text) return hit.read;
    const read = readConfig(text);
    remember(id, text, read);
    return read;
  };
}

/**
 * The config this instance has just written, as the write's answer names it
 * (`written`: the ConfigMap with its new resourceVersion): the next read of
 * that version — the look confirming the write, its echo's reconcile — finds
 * it parsed. `text` must be what `config` renders to, and is remembered only
 * if the API server holds exactly it.
 */
export function rememberWritten(written: ConfigMapView, key: string, text: string, config: WorkerConfig): void {
  const id = idOf(written);
  if (id === undefined || written.data?.[key] !== text) return;
  const previous = canonical(config);
  let assignment: Assignment | undefined;
  remember(id, text, { previous, rendered: () => text, assignment: () => (assignment ??= assignmentOf(previous)) });
}

function remember(id: string, text: string, read: ConfigRead): void {
  forget(id);
  remembered.set(id, { text, read });
  rememberedChars += text.length;
  // Oldest first (a Map iterates in insertion order).
  for (const oldest of remembered.keys()) {
    if (rememberedChars <= MAX_REMEMBERED_CHARS) break;
    forget(oldest);
  }
}

function forget(id: string): void {
  const entry = remembered.get(id);
  if (!entry) return;
  rememberedChars -= entry.text.length;
  remembered.delete(id);
}
