// The Kubernetes Events a status change is worth: sparse, one per Ready or
// Degraded condition whose status or reason changed, a Warning for what needs a human.
import type { Condition } from '../api/types.js';

/** Reasons reported as Warning Events even where they are not a Degraded condition. */
const WARNING_REASONS = new Set<string>([
  'InvalidSpec',
  'AcknowledgementRequired',
  'ConfigMapConflict',
  'StatefulSetClaimed',
  'DeploymentClaimed',
  'ConfigMapTooLarge',
  'TooManyWorkers',
  'Forbidden',
  'InvalidWrite',
  'NamespaceNotFound',
]);

export interface ConditionEvent {
  type: 'Normal' | 'Warning';
  reason: string;
  message: string;
}

/** Conditions worth an Event; Progressing moves with every restart and would be noise. */
const EVENTFUL = new Set(['Ready', 'Degraded']);

/** Events are sparse: one per Ready/Degraded condition whose status or reason changed. */
export function conditionEvents(before: readonly Condition[] | undefined, after: readonly Condition[]): ConditionEvent[] {
  return after.flatMap((cond) => {
    if (!EVENTFUL.has(cond.type)) return [];
    const prev = before?.find((p) => p.type === cond.type);
    if (prev && prev.status === cond.status && prev.reason === cond.reason) return [];
    // "Not degraded" is news only when it was degraded before.
    if (!prev && cond.type === 'Degraded' && cond.status === 'False') return [];
    const bad = (cond.type === 'Degraded' && cond.status === 'True') || WARNING_REASONS.has(cond.reason);
    return [{ type: bad ? 'Warning' : 'Normal', reason: cond.reason, message: `${cond.type}=${cond.status}: ${cond.message}` }];
  });
}
