// Frozen plain data: what the store keeps and the memos hand out. A reader
// that mutates one fails loudly (ES modules are strict).

/**
 * A deep copy of plain data (objects, arrays, primitives; `undefined` members kept, as structuredClone keeps them),
 * frozen as it is made: one pass, where structuredClone and a freeze walk it twice (the store copies on every write).
 * Anything else (a Map, a Date, a class instance) goes through structuredClone.
 */
export function frozenCopy<T>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(frozenCopy)) as T;
  const proto = Object.getPrototypeOf(value) as unknown;
  if (proto !== Object.prototype && proto !== null) return deepFreeze(structuredClone(value));
  const copy: Record<string, unknown> = {};
  for (const key of Object.keys(value)) {
    const member = frozenCopy((value as Record<string, unknown>)[key]);
    // A member named "__proto__" stays an own key (an assignment would set the copy's prototype).
    if (key === '__proto__') Object.defineProperty(copy, key, { value: member, enumerable: true, writable: true, configurable: true });
    else copy[key] = member;
  }
  return Object.freeze(copy) as T;
}

export function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  }
  return value;
}
