// The one home of worker identity: the n workers of StatefulSet `sts` are its
// pods `sts-<start>` … `sts-<start+n-1>`, where `start` is the StatefulSet's
// spec.ordinals.start (default 0); names, ordinals and their order are decided
// here only. A Deployment's workers are pod names too, but its pods' names are
// generated and a replaced pod comes back under a new one: who the workers
// are is decided per reconcile from the config in force and the pods
// (deploymentWorkers, at the end of this file).
import { compareNames } from './jobs.js';

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

/** A Deployment's pod as worker identity needs it. */
export interface PoolPod {
  name: string;
  /** RFC 3339 (compared as a string: the API server writes one format). */
  creationTimestamp: string;
  terminating: boolean;
}

export interface DeploymentWorkers {
  /** The workers the config assigns over (pod names), oldest pod first. */
  workers: string[];
  /**
   * Departed worker → the new pod taking its place: the successor inherits its
   * predecessor's share wholesale (a replaced pod's jobs move once, to its replacement).
   */
  successors: Map<string, string>;
}

/**
 * Who a Deployment pool's `count` workers are, given the workers of the config
 * in force (`previous`) and the Deployment's pods now. Deterministic given both:
 *  - a previous worker whose pod is live (not terminating) stays a worker, even
 *    above `count` (the Deployment picks which pods leave on a scale-down:
 *    they leave the config once they are terminating, never before);
 *  - a previous worker whose pod is gone or terminating is, while there are
 *    fewer than `count` workers, replaced by the oldest new pod (creation time,
 *    then name; gone predecessors before terminating ones, then by name), or,
 *    with no new pod yet, kept: its share waits for its replacement (as a
 *    StatefulSet's pod's does) and a terminating pod keeps running it;
 *  - new pods fill the remaining places, oldest first; any beyond `count` (a
 *    rolling update's surge) get no share until a place frees up;
 *  - while the Deployment is still creating pods (`creating`), new pods fill
 *    the remaining places only once there are enough of them for all: a
 *    scale-up seen pod by pod is then assigned once, not once per pod (the
 *    jobs stay with the workers that run them meanwhile).
 */
export function deploymentWorkers(previous: readonly string[], pods: readonly PoolPod[], count: number, creating = false): DeploymentWorkers {
  const byName = new Map(pods.map((p) => [p.name, p] as const));
  const live = (name: string) => byName.get(name)?.terminating === false;
  const before = new Set(previous);
  const oldestFirst = (a: PoolPod, b: PoolPod) => compareNames(a.creationTimestamp, b.creationTimestamp) || compareNames(a.name, b.name);
  const newcomers = pods.filter((p) => !p.terminating && !before.has(p.name)).sort(oldestFirst).map((p) => p.name);
  const kept = previous.filter(live);
  const vacated = previous
    .filter((name) => !live(name))
    .sort((a, b) => Number(byName.has(a)) - Number(byName.has(b)) || compareNames(a, b));

  const workers = [...kept];
  const successors = new Map<string, string>();
  for (const name of vacated) {
    if (workers.length >= count) break;
    const successor = newcomers.shift();
    if (successor !== undefined) successors.set(name, successor);
    workers.push(successor ?? name);
  }
  if (!creating || newcomers.length >= count - workers.length) {
    while (workers.length < count && newcomers.length > 0) workers.push(newcomers.shift()!);
  }
  const created = (name: string) => byName.get(name)?.creationTimestamp ?? '\uffff';
  workers.sort((a, b) => compareNames(created(a), created(b)) || compareNames(a, b));
  return { workers, successors };
}

/** The previous assignment with each departed worker's share under its successor's name (what the assigner keeps in place). */
export function inheritShares(previous: Readonly<Record<string, readonly string[]>>, successors: ReadonlyMap<string, string>): Record<string, readonly string[]> {
  const inherited: Record<string, readonly string[]> = {};
  for (const [worker, jobs] of Object.entries(previous)) {
    const heir = successors.get(worker) ?? worker;
    inherited[heir] = heir in inherited ? [...inherited[heir]!, ...jobs] : jobs;
  }
  return inherited;
}
