// The Triggers the real-Broker routing check applies (knative-e2e sends the
// table of test/support/routing-cases.ts through a real Broker holding them,
// the authority on which function receives which event): knative/base's own.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { splitDocuments } from '../../bin/deploy-plan.js';
import { ROUTING_BROKER, routingManifests } from '../harness/routing-broker.js';

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
