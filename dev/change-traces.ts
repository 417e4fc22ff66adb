// Which trace made each config version, for npm start's links to the trace
// viewer. The join: `assign` announces each version it publishes with an
// assignment.changed event whose id is `<swarm uid>.<version>` and whose
// source is the Swarm's API path (lib/events/assignment-changed.ts); its
// `send …` span carries both (cloudevents.event_id, cloudevents.event_source)
// and is in the trace of the reconcile that wrote that version. Pure.
import { ASSIGNMENT_CHANGED_TYPE, swarmPath } from '../lib/events/index.js';
import type { CollectedSpan } from '../test/harness/trace-sink.js';

/** Config version → id of the trace whose `assign` published it, for the Swarm `namespace/name`. */
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
