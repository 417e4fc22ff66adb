// Per-key coalescing inside one instance, like a controller workqueue: while a
// reconcile for a key runs, any number of new events for it cause exactly one
// follow-up reconcile, which they all share. Only an optimisation: correctness
// never depends on it (every reconcile reads fresh state).

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

/** No coalescing: every caller runs its own reconcile (the shortcut switched off, shortcuts.ts). */
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
