// The shortcuts an event takes on its way through a function, each an
// optimisation that must change no outcome (docs/design.md#shortcuts). All on
// in production; the simulator (--compare) and bench:reconcile switch them off
// to show what they change (nothing) and what they save.

export interface Shortcuts {
  /** A Swarm update echoing assign's own status write is answered with no read (keys.ts). */
  echoSkip: boolean;
  /** config.yml parsed once per ConfigMap version per instance (config-cache.ts). */
  configCache: boolean;
  /** Events for a Swarm that arrive while its reconcile runs share one follow-up (coalesce.ts). */
  coalescer: boolean;
}

export const SHORTCUTS: readonly (keyof Shortcuts)[] = ['echoSkip', 'configCache', 'coalescer'];

/** On unless switched off. */
export const shortcutOn = (shortcuts: Partial<Shortcuts> | undefined, name: keyof Shortcuts): boolean => shortcuts?.[name] !== false;
