// The event `assign` emits after publishing a new assignment (toTrigger parses it).
import { CloudEvent } from 'cloudevents';
import { ASSIGNMENT_CHANGED_TYPE } from './types.js';
import type { AssignmentChangedData } from './types.js';

/** Where the event comes from: the Swarm, as an API path (like the adapter's subjects). */
export function swarmPath(namespace: string, name: string): string {
  return `/apis/k8slab.info/v1alpha1/namespaces/${namespace}/swarms/${name}`;
}

export function assignmentChangedEvent(data: AssignmentChangedData): CloudEvent<AssignmentChangedData> {
  const { namespace, name, uid } = data.swarm;
  return new CloudEvent<AssignmentChangedData>({
    type: ASSIGNMENT_CHANGED_TYPE,
    source: swarmPath(namespace, name),
    // Deterministic: a redelivered or re-emitted change has the same id, so consumers can dedupe.
    id: `${uid}.${data.version}`,
    subject: name,
    datacontenttype: 'application/json',
    data: { swarm: { namespace, name, uid }, version: data.version, workers: [...data.workers] },
  });
}
