// Worker (pod) names of a StatefulSet: `<statefulSet>-<ordinal>`.

export function workerName(statefulSetName: string, ordinal: number): string {
  return `${statefulSetName}-${ordinal}`;
}

/** The ordinal of `name` if it is a pod of this StatefulSet, else undefined. */
export function ordinalOf(statefulSetName: string, name: string): number | undefined {
  const prefix = `${statefulSetName}-`;
  if (!name.startsWith(prefix)) return undefined;
  const digits = name.slice(prefix.length);
  // Canonical decimal only ("01" is not pod 1), as the StatefulSet controller names pods.
  if (!/^(0|[1-9][0-9]*)$/.test(digits)) return undefined;
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
  const ma = /^(.*)-(0|[1-9][0-9]*)$/.exec(a);
  const mb = /^(.*)-(0|[1-9][0-9]*)$/.exec(b);
  if (ma && mb && ma[1] === mb[1]) return Number(ma[2]) - Number(mb[2]);
  return a < b ? -1 : a > b ? 1 : 0;
}
