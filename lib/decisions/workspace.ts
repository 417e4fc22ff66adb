// The reconcilers' memory lives in the Swarm's own ConfigMap (seed 003's
// "workspace object"), never in status and never in a function instance:
// which pods still run an older share, and what moved in the last change.
// Annotations are written in the same guarded write as the config itself, so
// the two can never disagree.
import { ordinalOf, parseWorker, workerName } from '../assignment/workers.js';
import type { Move } from '../plan/diff.js';
import type { RestartStep } from '../plan/restart-order.js';

export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'swarm';
const ANNOTATION_RESTARTS = 'k8slab.info/restarts';
const ANNOTATION_LAST_CHANGE = 'k8slab.info/last-change';

/** Moves kept in the last-change annotation (annotations are capped at 256 KiB in total). */
const LAST_CHANGE_MOVES_KEPT = 100;

/**
 * A step of the restart plan (lib/plan: the worker, and the workers it waits
 * for) as recorded, pinned to the pod that must be restarted: the pod with uid
 * `staleUid` was running when the share was written, so it holds an older
 * share; any other pod of that worker started later and read the new one.
 */
export type RecordedStep = RestartStep & { readonly staleUid: string };

export interface RestartWorkspace {
  /** The config version the pending restarts bring the pods to. */
  version: number;
  steps: RecordedStep[];
  /**
   * Workers whose share this write changed, while the steps are pinned from the
   * pods listed before it landed: a pod of theirs made in between may have
   * mounted the older config. Until a look that listed the pods after the write
   * pins those too (restart-bookkeeping.ts sealRestarts), nobody restarts or
   * grows the pool. Absent once sealed.
   */
  unsealed?: string[];
}

export interface LastChange {
  version: number;
  /**
   * RFC 3339: when this config version was written (by the writer's clock).
   * What "blocked since" counts from; absent in annotations written before it was recorded.
   */
  at?: string;
  movedTotal: number;
  /** The first LAST_CHANGE_MOVES_KEPT moves. */
  moves: Move[];
}

const isStringArray = (v: unknown): v is string[] => Array.isArray(v) && v.every((s) => typeof s === 'string');

/**
 * The restart annotation, compactly: workers are `<sts>-<ordinal>`, so a step is
 * `[ordinal, staleUid, [ordinals waited for]]` under one `sts` — about 50 bytes a
 * worker, so even maxWorkers pending restarts stay far below the 256 KiB that all
 * annotations of an object may take together.
 */
interface CompactRestarts {
  v: number;
  sts: string;
  s: Array<[number, string, number[]]>;
  /** Unsealed workers' ordinals. */
  u?: number[];
}

function encodeRestarts(ws: RestartWorkspace): string {
  const unsealed = ws.unsealed ?? [];
  const sts = parseWorker(ws.steps[0]?.worker ?? unsealed[0] ?? '')?.statefulSet;
  const ordinal = (w: string): number | undefined => (sts === undefined ? undefined : ordinalOf(sts, w));
  const names = [...ws.steps.flatMap((s) => [s.worker, ...s.waitFor]), ...unsealed];
  // Workers not of one StatefulSet cannot be written as ordinals: keep their names.
  if (sts === undefined || names.some((w) => ordinal(w) === undefined)) return JSON.stringify(ws);
  const compact: CompactRestarts = {
    v: ws.version,
    sts,
    s: ws.steps.map((s) => [ordinal(s.worker) ?? 0, s.staleUid, s.waitFor.map((w) => ordinal(w) ?? 0)]),
    ...(ws.unsealed ? { u: ws.unsealed.map((w) => ordinal(w) ?? 0) } : {}),
  };
  return JSON.stringify(compact);
}

function decodeCompact(parsed: Partial<CompactRestarts>): RestartWorkspace | undefined {
  const { v, sts, s, u } = parsed;
  if (typeof v !== 'number' || typeof sts !== 'string' || !Array.isArray(s)) return undefined;
  const isOrdinal = (n: unknown): n is number => Number.isInteger(n) && (n as number) >= 0;
  const unsealed = Array.isArray(u) ? { unsealed: u.filter(isOrdinal).map((o) => workerName(sts, o)) } : {};
  const steps = s.filter(
    (step): step is [number, string, number[]] =>
      Array.isArray(step) && isOrdinal(step[0]) && typeof step[1] === 'string' && Array.isArray(step[2]) && step[2].every(isOrdinal),
  );
  return { version: v, steps: steps.map(([w, uid, waits]) => ({ worker: workerName(sts, w), staleUid: uid, waitFor: waits.map((o) => workerName(sts, o)) })), ...unsealed };
}

/** Tolerant: an absent or damaged annotation reads as "nothing pending". Reads the older verbose form too. */
export function readRestarts(annotations: Record<string, string>): RestartWorkspace {
  const empty: RestartWorkspace = { version: 0, steps: [] };
  const raw = annotations[ANNOTATION_RESTARTS];
  if (!raw) return empty;
  try {
    const parsed = JSON.parse(raw) as unknown;
    if (!parsed || typeof parsed !== 'object') return empty;
    if ('sts' in parsed) return decodeCompact(parsed as Partial<CompactRestarts>) ?? empty;
    const { version, steps, unsealed } = parsed as { version?: unknown; steps?: unknown; unsealed?: unknown };
    if (typeof version !== 'number' || !Array.isArray(steps)) return empty;
    const valid = steps.filter(
      (s): s is RecordedStep =>
        !!s &&
        typeof s === 'object' &&
        typeof (s as RecordedStep).worker === 'string' &&
        typeof (s as RecordedStep).staleUid === 'string' &&
        isStringArray((s as RecordedStep).waitFor),
    );
    return { version, steps: valid.map((s) => ({ worker: s.worker, staleUid: s.staleUid, waitFor: [...s.waitFor] })), ...(isStringArray(unsealed) ? { unsealed } : {}) };
  } catch {
    return empty;
  }
}

export function readLastChange(annotations: Record<string, string>): LastChange | undefined {
  const raw = annotations[ANNOTATION_LAST_CHANGE];
  if (!raw) return undefined;
  try {
    const parsed = JSON.parse(raw) as LastChange;
    if (!parsed || typeof parsed.version !== 'number' || !Array.isArray(parsed.moves)) return undefined;
    // The older form has no time; a damaged one is dropped, not trusted.
    const { version, movedTotal, moves, at } = parsed;
    return { version, movedTotal, moves, ...(typeof at === 'string' && !Number.isNaN(Date.parse(at)) ? { at } : {}) };
  } catch {
    return undefined;
  }
}

/** The ConfigMap records a write whose pods were not yet listed after it landed (observe lists them again). */
export function restartsUnsealed(annotations: Record<string, string>): boolean {
  return (readRestarts(annotations).unsealed?.length ?? 0) > 0;
}

/** Annotations with the restart workspace set (or removed when nothing is pending). */
export function withRestarts(annotations: Record<string, string>, ws: RestartWorkspace): Record<string, string> {
  const next = { ...annotations };
  if (ws.steps.length === 0 && !ws.unsealed) delete next[ANNOTATION_RESTARTS];
  else next[ANNOTATION_RESTARTS] = encodeRestarts(ws);
  return next;
}

export function withLastChange(
  annotations: Record<string, string>,
  change: { version: number; moves: readonly Move[]; at?: string },
): Record<string, string> {
  const kept: LastChange = {
    version: change.version,
    ...(change.at ? { at: change.at } : {}),
    movedTotal: change.moves.length,
    moves: change.moves.slice(0, LAST_CHANGE_MOVES_KEPT).map((m) => ({ ...m })),
  };
  return { ...annotations, [ANNOTATION_LAST_CHANGE]: JSON.stringify(kept) };
}

