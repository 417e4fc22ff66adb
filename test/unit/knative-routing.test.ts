// Which function receives which event, per the Trigger YAMLs, as the local
// stand-in routes it (dev/broker/filters.ts, after knative.dev/eventing
// pkg/eventfilter/subscriptionsapi): the table of test/support/routing-cases.ts
// (which knative-e2e sends through a real Broker, the authority) and the
// events recorded from the real ApiServerSource adapter.
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CloudEvent } from 'cloudevents';
import { subscribersFor } from '../../dev/broker/filters.js';
import { loadTriggers } from '../../dev/broker/triggers.js';
import { splitDocuments } from '../../bin/deploy-plan.js';
import { ROUTING_BROKER, routingManifests } from '../harness/routing-broker.js';
import { routingCases } from '../support/routing-cases.js';

type Attributes = Record<string, unknown>;

// The same evaluator and Trigger loader the local broker routes with.
const triggers = loadTriggers();

function routes(event: CloudEvent<unknown> | Attributes): string[] {
  const attributes = (typeof event.toJSON === 'function' ? (event as CloudEvent<unknown>).toJSON() : event) as Attributes;
  return subscribersFor(triggers, attributes).map((t) => t.subscriber);
}

describe('Trigger routing by the local stand-in (dev/broker), against the table the real Broker passes in knative-e2e', () => {
  for (const c of routingCases()) {
    it(`${c.what} → ${c.routes.join(', ') || 'nowhere'}`, () => {
      expect(routes(c.event)).toEqual(c.routes);
    });
  }
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

describe("the real-Broker routing test's Triggers (test/harness/routing-broker.ts)", () => {
  it("are knative/base's, filters untouched, in their own Broker, delivering to the recorder, with no dead-letter sink", () => {
    const shipped = splitDocuments(readFileSync(resolve(import.meta.dirname, '../../knative/base/triggers.yaml'), 'utf8'));
    const [broker, ...triggers] = routingManifests('ns', 'http://10.0.0.1:9');
    expect(broker).toMatchObject({ kind: 'Broker', metadata: { name: ROUTING_BROKER, namespace: 'ns' } });
    expect(triggers.map((t) => t.metadata?.name)).toEqual(['swarm-assign', 'swarm-restart']);
    for (const t of triggers) {
      const original = shipped.find((s) => s.metadata?.name === t.metadata?.name)!;
      expect(t.spec).toEqual({
        filters: (original.spec as { filters: unknown }).filters,
        broker: ROUTING_BROKER,
        subscriber: { uri: `http://10.0.0.1:9/${t.metadata?.name}` },
      });
    }
  });
});
