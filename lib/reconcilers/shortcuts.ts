// The shortcuts an event takes on its way through a function, all in this one
// module: each an optimisation that must change no outcome
// (docs/design.md#shortcuts), since every reconcile reads fresh state. All on
// in production; the simulator (--compare, --without) and bench:reconcile
// (SWARM_BENCH_SHORTCUTS=1) switch them off to show what they change (nothing)
// and what they save.
//   echo skip     a Swarm update echoing assign's own status write reads nothing
//   config cache  config.yml parsed once per ConfigMap version per instance
//   coalescer     events for a key that arrive while its reconcile runs share one follow-up
import type { Assignment } from '../assignment/types.js';
import { readConfig, type ConfigRead, type ConfigReader } from '../decisions/config-read.js';
import type { ApiServerTrigger } from '../events/types.js';
import type { ConfigMapView } from '../kube/types.js';
import { assignmentOf, canonical, type WorkerConfig } from '../workerconfig/index.js';

// ---------------------------------------------------------------- the switch

export interface Shortcuts {
  /** A Swarm update echoing assign's own status write is answered with no read. */
  echoSkip: boolean;
  /** config.yml parsed once per ConfigMap version per instance. */
  configCache: boolean;
  /** Events for a Swarm that arrive while its reconcile runs share one follow-up. */
  coalescer: boolean;
}

export const SHORTCUTS: readonly (keyof Shortcuts)[] = ['echoSkip', 'configCache', 'coalescer'];

/** On unless switched off. */
export const shortcutOn = (shortcuts: Partial<Shortcuts> | undefined, name: keyof Shortcuts): boolean => shortcuts?.[name] !== false;

// ------------------------------------------------------------- the echo skip

/**
 * A Swarm event whose copy shows its generation already observed: assign's own
 * status write coming back. That generation is reconciled, and whatever changed
 * since has its own event (or the resync's), so it needs no read (keys.ts).
 */
export const isOwnEcho = (trigger: ApiServerTrigger, shortcuts: Partial<Shortcuts> | undefined): boolean =>
  !!trigger.generationObserved && shortcutOn(shortcuts, 'echoSkip');

// ---------------------------------------------------------- the config cache
// Per-instance memory of config.yml as read (parsed, and rendered back), by
// ConfigMap uid+resourceVersion. An entry answers only for the very text it
// was read from, so a stale or colliding key is a miss.

/** Bound on the config text remembered (the parsed copies take a few times as much). */
const MAX_REMEMBERED_CHARS = 8 * 1024 * 1024;

const remembered = new Map<string, { text: string; read: ConfigRead }>();
let rememberedChars = 0;

const idOf = (configMap: ConfigMapView | undefined): string | undefined =>
  configMap?.uid && configMap.resourceVersion ? `${configMap.uid}/${configMap.resourceVersion}` : undefined;

/** `on`: false reads afresh every time (the shortcut switched off). */
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

// -------------------------------------------------------------- the coalescer
// Per-key coalescing inside one instance, like a controller workqueue: while a
// reconcile for a key runs, any number of new events for it cause exactly one
// follow-up reconcile, which they all share. An optimisation only: what the
// simulator found with it off were defects its timing hid (docs/design.md#shortcuts).

export interface Coalesced<T> {
  value: T;
  /** True for callers that joined a follow-up scheduled by an earlier caller. */
  shared: boolean;
}

/** `followUp`: this run was scheduled while another ran, so what the caller read before may predate that run's writes. */
export type Reconcile<T> = (followUp: boolean) => Promise<T>;

export interface Coalescer {
  run<T>(key: string, reconcile: Reconcile<T>): Promise<Coalesced<T>>;
  /** Keys with a reconcile in flight (for tests and introspection). */
  inFlight(): number;
}

/** No coalescing: every caller runs its own reconcile (the shortcut switched off). */
export const uncoalesced: Coalescer = {
  run: async (_key, reconcile) => ({ value: await reconcile(false), shared: false }),
  inFlight: () => 0,
};

interface Slot {
  current: Promise<unknown>;
  followUp?: Promise<unknown>;
}

export function createCoalescer(onCoalesced?: (key: string) => void): Coalescer {
  const slots = new Map<string, Slot>();
  const settle = () => undefined;

  function start<T>(key: string, slot: Slot, reconcile: Reconcile<T>, followUp: boolean): Promise<T> {
    const p = reconcile(followUp).finally(() => {
      if (slot.current === p && !slot.followUp) slots.delete(key);
    });
    slot.current = p;
    return p;
  }

  return {
    async run<T>(key: string, reconcile: Reconcile<T>): Promise<Coalesced<T>> {
      const slot = slots.get(key);
      if (!slot) {
        const fresh: Slot = { current: Promise.resolve() };
        slots.set(key, fresh);
        return { value: await start(key, fresh, reconcile, false), shared: false };
      }
      if (slot.followUp) {
        onCoalesced?.(key);
        return { value: (await slot.followUp) as T, shared: true };
      }
      const followUp = slot.current.then(settle, settle).then(() => {
        slot.followUp = undefined;
        return start(key, slot, reconcile, true);
      });
      slot.followUp = followUp;
      return { value: await followUp, shared: false };
    },
    inFlight: () => slots.size,
  };
}
