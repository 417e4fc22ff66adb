// Which trace made each config version, for npm start's links to the trace
// viewer. Pure. Two joins, the exact one first:
// - Announced: when restarts are due, `assign` announces the version it
//   published with an assignment.changed event whose id is
//   `<swarm uid>.<version>` and whose source is the Swarm's API path
//   (lib/events/assignment-changed.ts); its `send …` span carries both and is
//   in the trace of the reconcile that wrote that version.
// - Otherwise (a version with nothing to restart is not announced, the first
//   one included), by time: the trace of the last successful write of the
//   Swarm's ConfigMap that started after the view last saw another version and
//   before it saw this one. The view polls each second, so that is this
//   version's write unless two writes fell in one window (then the last).
import { ASSIGNMENT_CHANGED_TYPE, swarmPath } from '../lib/events/index.js';
import type { CollectedSpan } from '../test/harness/trace-sink.js';

/** Config version → id of the trace whose `assign` announced it, for the Swarm `namespace/name`. */
export function changeTraces(spans: readonly CollectedSpan[], namespace: string, name: string): Map<number, string> {
  const source = swarmPath(namespace, name);
  const first = new Map<number, CollectedSpan>();
  for (const span of spans) {
    if (span.kind !== 'producer' || span.attributes['cloudevents.event_type'] !== ASSIGNMENT_CHANGED_TYPE) continue;
    if (span.attributes['cloudevents.event_source'] !== source) continue;
    const id = span.attributes['cloudevents.event_id'];
    const version = typeof id === 'string' ? Number(/\.(\d+)$/.exec(id)?.[1]) : NaN;
    if (!Number.isInteger(version)) continue;
    // The earliest announcement wins: a re-emitted change is sent again, in a later trace, with the same id.
    const seen = first.get(version);
    if (!seen || span.startTimeUnixNano < seen.startTimeUnixNano) first.set(version, span);
  }
  return new Map([...first].map(([version, span]) => [version, span.traceId]));
}

export interface ConfigWrite {
  readonly traceId: string;
  /** Start, milliseconds since the epoch. */
  readonly startMs: number;
}

const WRITES = new Set(['CREATE', 'UPDATE', 'PATCH']);

/** Successful writes of ConfigMap `namespace/configMap` by the functions (their `kube …` client spans), by start. */
export function configWrites(spans: readonly CollectedSpan[], namespace: string, configMap: string): ConfigWrite[] {
  return spans
    .filter((s) => {
      const a = s.attributes;
      const status = a['http.response.status_code'];
      return s.kind === 'client' && a['kube.resource'] === 'configmaps' && WRITES.has(String(a['kube.verb'])) && a['k8s.namespace.name'] === namespace && a['kube.name'] === configMap && typeof status === 'number' && status >= 200 && status < 300;
    })
    .map((s) => ({ traceId: s.traceId, startMs: Number(s.startTimeUnixNano / 1_000_000n) }))
    .sort((a, b) => a.startMs - b.startMs);
}

export interface Sighting {
  readonly version: number;
  /** When the view read it first, milliseconds since the epoch (before the read). */
  readonly atMs: number;
}

/** Config version → trace id, by the two joins above (every announced version, seen or not); a version neither finds is left out. */
export function versionTraces(sightings: readonly Sighting[], announced: ReadonlyMap<number, string>, writes: readonly ConfigWrite[]): Map<number, string> {
  const out = new Map<number, string>(announced);
  sightings.forEach((sighting, i) => {
    const exact = announced.get(sighting.version);
    if (exact) {
      out.set(sighting.version, exact);
      return;
    }
    const after = i > 0 ? sightings[i - 1]!.atMs : -Infinity;
    const last = writes.filter((w) => w.startMs > after && w.startMs < sighting.atMs).at(-1);
    if (last) out.set(sighting.version, last.traceId);
  });
  return out;
}
