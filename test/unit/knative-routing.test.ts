// Which function receives which event, per the Trigger YAMLs: evaluated with
// the Knative subscriptions-API filter semantics (dev/broker/filters.ts, after
// knative.dev/eventing pkg/eventfilter/subscriptionsapi) over events shaped
// exactly like the ApiServerSource adapter's, and over its recorded events.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CloudEvent } from 'cloudevents';
import { subscribersFor } from '../../dev/broker/filters.js';
import { loadTriggers } from '../../dev/broker/triggers.js';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { assignmentChangedEvent } from '../../lib/events/assignment-changed.js';
import { resyncPingEvent } from '../../lib/events/ping.js';

type Attributes = Record<string, unknown>;

// The same evaluator and Trigger loader the local broker routes with.
const triggers = loadTriggers();

function routes(event: CloudEvent<unknown> | Attributes): string[] {
  const attributes = (typeof event.toJSON === 'function' ? (event as CloudEvent<unknown>).toJSON() : event) as Attributes;
  return subscribersFor(triggers, attributes).map((t) => t.subscriber);
}

const meta = (name: string) => ({ name, namespace: 'swarm', uid: `uid-${name}` });
const swarm = { apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', metadata: meta('swarm-worker'), spec: {} };
const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: meta('swarm-worker'), spec: { replicas: 3 } };
const deployment = { apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta('swarm-worker'), spec: { replicas: 3 } };
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { ...meta('swarm-worker-0'), labels: { 'k8slab.info/swarm': 'swarm-worker' } } };
const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { ...meta('swarm-worker-0'), labels: { 'k8slab.info/swarm': 'swarm-worker' } }, spec: { holderIdentity: 'uid' } };

describe('Trigger routing', () => {
  for (const verb of ['add', 'update', 'delete'] as const) {
    it(`Swarm, StatefulSet and Deployment ${verb} events go to swarm-assign only`, () => {
      expect(routes(apiServerEvent({ verb, mode: 'resource', object: swarm }))).toEqual(['swarm-assign']);
      expect(routes(apiServerEvent({ verb, mode: 'resource', object: sts }))).toEqual(['swarm-assign']);
      // A Deployment pool's status follows its pods: what assign hears of one terminating or Ready.
      expect(routes(apiServerEvent({ verb, mode: 'resource', object: deployment }))).toEqual(['swarm-assign']);
    });

    it(`Lease (acknowledgement) ${verb} events go to swarm-assign only`, () => {
      expect(routes(apiServerEvent({ verb, mode: 'resource', object: lease }))).toEqual(['swarm-assign']);
    });

    it(`the Swarms' own ConfigMap ${verb} events go to swarm-assign only`, () => {
      const configMap = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { ...meta('swarm-worker-config'), labels: { 'app.kubernetes.io/managed-by': 'swarm', 'k8slab.info/swarm': 'swarm-worker' } } };
      expect(routes(apiServerEvent({ verb, mode: 'resource', object: configMap }))).toEqual(['swarm-assign']);
    });

    it(`Pod ${verb} events go to swarm-restart only`, () => {
      expect(routes(apiServerEvent({ verb, mode: 'resource', object: pod }))).toEqual(['swarm-restart']);
    });
  }

  it('the resync ping (PingSource) goes to swarm-assign only', () => {
    expect(routes(resyncPingEvent({ namespace: 'swarm' }))).toEqual(['swarm-assign']);
  });

  it('the assign function\'s assignment.changed reply goes to swarm-restart only (no loop back to assign)', () => {
    const reply = assignmentChangedEvent({ swarm: { namespace: 'swarm', name: 'swarm-worker', uid: 'u' }, version: 2, workers: ['swarm-worker-0'] });
    expect(routes(reply)).toEqual(['swarm-restart']);
  });

  it('routes nothing of another kind or group, nor ref-mode events (the source sends Resource mode)', () => {
    const replicaSet = { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: meta('web') };
    const foreignSwarm = { ...swarm, apiVersion: 'example.com/v1' };
    const foreignDeployment = { ...deployment, apiVersion: 'example.com/v1' };
    expect(routes(apiServerEvent({ verb: 'add', mode: 'resource', object: replicaSet }))).toEqual([]);
    expect(routes(apiServerEvent({ verb: 'add', mode: 'resource', object: foreignDeployment }))).toEqual([]);
    expect(routes(apiServerEvent({ verb: 'add', mode: 'resource', object: foreignSwarm }))).toEqual([]);
    expect(routes(apiServerEvent({ verb: 'add', mode: 'ref', object: swarm }))).toEqual([]);
  });
});

describe('Trigger routing of events recorded from the real ApiServerSource adapter', () => {
  const dir = resolve(import.meta.dirname, '../fixtures/apiserversource');
  const fixtures = readdirSync(dir).filter((f) => f.endsWith('.json'));

  /** Binary-mode CloudEvent: the attributes are the ce-* headers. */
  function attributesOf(file: string): Attributes {
    const { headers } = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { headers: Record<string, string> };
    return Object.fromEntries(Object.entries(headers).filter(([h]) => h.startsWith('ce-')).map(([h, v]) => [h.slice(3), v]));
  }

  it('has recordings of every kind and verb to check', () => {
    expect(fixtures.filter((f) => f.startsWith('resource-'))).toHaveLength(9);
  });

  it('routes Resource-mode Swarm/StatefulSet events to assign, Pod events to restart, and Reference mode nowhere', () => {
    for (const file of fixtures) {
      const [mode, kind] = file.split('-') as [string, string];
      const expected = mode !== 'resource' ? [] : kind === 'pod' ? ['swarm-restart'] : ['swarm-assign'];
      expect({ file, routes: routes(attributesOf(file)) }).toEqual({ file, routes: expected });
    }
  });
});
