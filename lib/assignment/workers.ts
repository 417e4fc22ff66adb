// The one home of worker identity: the n workers of StatefulSet `sts` are its
// pods `sts-<start>` … `sts-<start+n-1>`, where `start` is the StatefulSet's
// spec.ordinals.start (default 0); names, ordinals and their order are decided
// here only.

export function workerName(statefulSetName: string, ordinal: number): string {
  return `${statefulSetName}-${ordinal}`;
}

/** The names of `replicas` workers whose ordinals begin at `startOrdinal`. */
export const workerNames = (statefulSetName: string, replicas: number, startOrdinal = 0): string[] =>
  Array.from({ length: replicas }, (_, i) => workerName(statefulSetName, startOrdinal + i));

/**
 * The position (0 … replicas-1) of `name` among the workers `startOrdinal` …
 * `startOrdinal+replicas-1`, or undefined when it is not one of them (another
 * StatefulSet's pod, or an ordinal outside the range).
 */
export function workerIndex(statefulSetName: string, name: string, replicas: number, startOrdinal = 0): number | undefined {
  const ordinal = ordinalOf(statefulSetName, name);
  if (ordinal === undefined) return undefined;
  const index = ordinal - startOrdinal;
  return index >= 0 && index < replicas ? index : undefined;
}

/** Canonical decimal only ("01" is not pod 1), as the StatefulSet controller names pods. */
const ORDINAL = /^(0|[1-9][0-9]*)$/;

/** `<statefulSet>-<ordinal>` split, for a name whose StatefulSet is not known; undefined if it is not one. */
export function parseWorker(name: string): { statefulSet: string; ordinal: number } | undefined {
  const dash = name.lastIndexOf('-');
  if (dash <= 0) return undefined;
  const statefulSet = name.slice(0, dash);
  const ordinal = ordinalOf(statefulSet, name);
  return ordinal === undefined ? undefined : { statefulSet, ordinal };
}

/** The ordinal of `name` if it is a pod of this StatefulSet, else undefined. */
export function ordinalOf(statefulSetName: string, name: string): number | undefined {
  const prefix = `${statefulSetName}-`;
  if (!name.startsWith(prefix)) return undefined;
  const digits = name.slice(prefix.length);
  if (!ORDINAL.test(digits)) return undefined;
  const ordinal = Number(digits);
  return Number.isSafeInteger(ordinal) ? ordinal : undefined;
}

/** Worker names sorted by ordinal (numerically), unknown names last in code-unit order. */
export function sortWorkers(statefulSetName: string, names: Iterable<string>): string[] {
  return [...names].sort((a, b) => {
    const oa = ordinalOf(statefulSetName, a);
    const ob = ordinalOf(statefulSetName, b);
    if (oa !== undefined && ob !== undefined) return oa - ob;
    if (oa !== undefined) return -1;
    if (ob !== undefined) return 1;
    return a < b ? -1 : a > b ? 1 : 0;
  });
}

/** Pod names in natural order: same prefix → by trailing ordinal (w-2 before w-10), else code units. */
export function compareWorkers(a: string, b: string): number {
  const wa = parseWorker(a);
  const wb = parseWorker(b);
  if (wa && wb && wa.statefulSet === wb.statefulSet) return wa.ordinal - wb.ordinal;
  return a < b ? -1 : a > b ? 1 : 0;
}
