// Per-instance memory of config.yml as read (parsed, and rendered back), by
// ConfigMap uid+resourceVersion, and of the assignment decided over it: an
// optimisation only. An entry answers only for the very text it was read from,
// so a stale or colliding key is a miss.
import type { Swarm } from '../api/types.js';
import { assign } from '../assignment/index.js';
import type { AssignResult, Assignment } from '../assignment/types.js';
import { readConfig, type ConfigRead, type ConfigReader } from '../decisions/config-read.js';
import type { Assigner } from '../decisions/configmap.js';
import type { ConfigMapView } from '../kube/types.js';
import { assignmentOf, canonical, type WorkerConfig } from '../workerconfig/index.js';

/** Bound on the config text remembered (the parsed copies take a few times as much). */
const MAX_REMEMBERED_CHARS = 8 * 1024 * 1024;

const remembered = new Map<string, { text: string; read: ConfigRead }>();
let rememberedChars = 0;

const idOf = (configMap: ConfigMapView | undefined): string | undefined =>
  configMap?.uid && configMap.resourceVersion ? `${configMap.uid}/${configMap.resourceVersion}` : undefined;

export function cachedConfigReader(configMap: ConfigMapView | undefined): ConfigReader {
  const id = idOf(configMap);
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

/**
 * Assignments decided over a remembered config (its assignment is one object
 * per read, above), by the Swarm's uid and generation — the API server bumps
 * the generation on every spec change, so they name one job list — and the
 * workers. A no-op event then skips the assigner: same inputs, same answer.
 * Dropped with the config they were decided over.
 */
const decided = new WeakMap<Assignment, Map<string, AssignResult>>();
/** Answers kept per remembered config (one per worker count or spec seen since it was written). */
const MAX_DECIDED_PER_CONFIG = 4;

export function cachedAssigner(swarm: Swarm): Assigner {
  const { uid, generation } = swarm.metadata;
  return (input) => {
    if (!input.previous || !uid || generation === undefined) return assign(input);
    const key = JSON.stringify([uid, generation, input.statefulSetName, input.replicas, input.startOrdinal ?? 0, input.workers ?? null]);
    let answers = decided.get(input.previous);
    const hit = answers?.get(key);
    if (hit) return hit;
    const result = assign(input);
    if (!answers) decided.set(input.previous, (answers = new Map()));
    if (answers.size >= MAX_DECIDED_PER_CONFIG) answers.clear();
    answers.set(key, result);
    return result;
  };
}
