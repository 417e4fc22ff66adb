// Per-instance memory of config.yml as read (parsed, and rendered back), by
// ConfigMap uid+resourceVersion: an optimisation only. An entry answers only
// for the very text it was read from, so a stale or colliding key is a miss.
import { readConfig, type ConfigRead, type ConfigReader } from '../decisions/configmap.js';
import type { ConfigMapView } from '../kube/types.js';

/** Bound on the config text remembered (the parsed copies take a few times as much). */
const MAX_REMEMBERED_CHARS = 8 * 1024 * 1024;

const remembered = new Map<string, { text: string; read: ConfigRead }>();
let rememberedChars = 0;

export function cachedConfigReader(configMap: ConfigMapView | undefined): ConfigReader {
  const id = configMap?.uid && configMap.resourceVersion ? `${configMap.uid}/${configMap.resourceVersion}` : undefined;
  return (text) => {
    if (id === undefined || text === undefined) return readConfig(text);
    const hit = remembered.get(id);
    if (hit && hit.text === text) return hit.read;
    const read = readConfig(text);
    forget(id);
    remembered.set(id, { text, read });
    rememberedChars += text.length;
    // Oldest first (a Map iterates in insertion order).
    for (const oldest of remembered.keys()) {
      if (rememberedChars <= MAX_REMEMBERED_CHARS) break;
      forget(oldest);
    }
    return read;
  };
}

function forget(id: string): void {
  const entry = remembered.get(id);
  if (!entry) return;
  rememberedChars -= entry.text.length;
  remembered.delete(id);
}
