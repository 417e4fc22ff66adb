// Which function each kind of event must reach, per knative/base/triggers.yaml:
// events shaped exactly like the ApiServerSource adapter's, the PingSource's
// and assign's reply. The authority is Knative itself: knative-e2e sends every
// case through a real Broker holding those Triggers (test/integration/
// knative-e2e.test.ts).
import type { CloudEvent } from 'cloudevents';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { assignmentChangedEvent } from '../../lib/events/assignment-changed.js';
import { resyncPingEvent } from '../../lib/events/ping.js';

export type Function = 'swarm-assign' | 'swarm-restart';

export interface RoutingCase {
  readonly what: string;
  readonly event: CloudEvent<unknown>;
  /** The Triggers' subscribers that take it (none: dropped by the Broker). */
  readonly routes: readonly Function[];
}

const meta = (name: string) => ({ name, namespace: 'swarm', uid: `uid-${name}` });
const labelled = { 'k8slab.info/swarm': 'swarm-worker' };
const swarm = { apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', metadata: meta('swarm-worker'), spec: {} };
const objects = {
  Swarm: swarm,
  StatefulSet: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('swarm-worker'), spec: { replicas: 3 } },
  Deployment: { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('swarm-worker'), spec: { replicas: 3 } },
  Lease: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...meta('swarm-worker-0'), labels: labelled }, spec: { holderIdentity: 'uid' } },
  ConfigMap: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...meta('swarm-worker-config'), labels: { ...labelled, 'app.kubernetes.io/managed-by': 'swarm' } } },
  Pod: { apiVersion: 'v1', kind: 'Pod', metadata: { ...meta('swarm-worker-0'), labels: labelled } },
} as const;

/** Every case, each event with its own id. */
export function routingCases(): RoutingCase[] {
  const cases: RoutingCase[] = [];
  for (const verb of ['add', 'update', 'delete'] as const) {
    for (const [kind, object] of Object.entries(objects)) {
      cases.push({ what: `${kind} ${verb}`, event: apiServerEvent({ verb, mode: 'resource', object }), routes: ['swarm-assign'] });
    }
  }
  cases.push(
    { what: 'the resync ping (PingSource)', event: resyncPingEvent({ namespace: 'swarm' }), routes: ['swarm-assign'] },
    {
      what: "assign's assignment.changed reply (never back to assign: no loop)",
      event: assignmentChangedEvent({ swarm: { namespace: 'swarm', name: 'swarm-worker', uid: 'u' }, version: 2, workers: ['swarm-worker-0'] }),
      routes: ['swarm-restart'],
    },
    { what: 'a ReplicaSet (a kind Swarm does not handle)', event: apiServerEvent({ verb: 'add', mode: 'resource', object: { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta('web') } }), routes: [] },
    { what: 'a Swarm of another group', event: apiServerEvent({ verb: 'add', mode: 'resource', object: { ...swarm, apiVersion: 'example.com/v1' } }), routes: [] },
    { what: 'a Reference-mode event (the source sends Resource mode)', event: apiServerEvent({ verb: 'add', mode: 'ref', object: swarm }), routes: [] },
  );
  return cases;
}
