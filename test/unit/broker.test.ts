// The local broker: routes by the Trigger YAML, retries like Knative's
// dispatcher, dead-letters final failures, and ingests replies again.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import express from 'express';
import { CloudEvent, HTTP } from 'cloudevents';
import { afterEach, describe, expect, it } from 'vitest';
import { backoffMs, durationMs, isRetryable, triggerMatches } from '../../dev/broker/filters.js';
import { createLocalBroker, type Delivery } from '../../dev/broker/local-broker.js';
import { loadTriggers } from '../../dev/broker/triggers.js';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { assignmentChangedEvent } from '../../lib/events/assignment-changed.js';

const servers: Server[] = [];
afterEach(() => servers.splice(0).forEach((s) => s.close()));

async function endpoint(handler: (event: CloudEvent<unknown>) => { status: number; reply?: CloudEvent<unknown> }): Promise<string> {
  const app = express();
  app.post('/', express.text({ type: () => true }), (req, res) => {
    const event = HTTP.toEvent({ headers: req.headers, body: req.body as string }) as CloudEvent<unknown>;
    const out = handler(event);
    if (out.reply) {
      const m = HTTP.binary(out.reply);
      res.status(out.status).set(m.headers as Record<string, string>).send(m.body);
    } else res.status(out.status).json({});
  });
  const server: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
}

const sts = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'w', namespace: 'ns', uid: 'u' } };
const pod = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'w-0', namespace: 'ns', uid: 'p', labels: { 'k8slab.info/swarm': 's' } } };

describe('filters', () => {
  it('reads the delivery spec the way Knative does', () => {
    expect(durationMs('PT0.5S', 0)).toBe(500);
    expect(durationMs('PT1M2S', 0)).toBe(62_000);
    expect(backoffMs({ retry: 3, backoffPolicy: 'exponential', backoffDelayMs: 100 }, 3)).toBe(400);
    expect(backoffMs({ retry: 3, backoffPolicy: 'linear', backoffDelayMs: 100 }, 3)).toBe(300);
    expect([500, 503, 404, 408, 409, 429].every(isRetryable)).toBe(true);
    expect([400, 413, 415, 422].some(isRetryable)).toBe(false);
  });

  it('routes by the Trigger manifests in knative/base', () => {
    const triggers = loadTriggers();
    const route = (e: CloudEvent<unknown>) => triggers.filter((t) => triggerMatches(t, e.toJSON() as Record<string, unknown>)).map((t) => t.subscriber);
    expect(route(apiServerEvent({ verb: 'update', mode: 'resource', object: sts }))).toEqual(['swarm-assign']);
    expect(route(apiServerEvent({ verb: 'update', mode: 'resource', object: pod }))).toEqual(['swarm-restart']);
    const changed = assignmentChangedEvent({ swarm: { namespace: 'ns', name: 's', uid: 'u' }, version: 2, workers: ['w-0'] });
    expect(route(changed)).toEqual(['swarm-restart']);
  });
});

describe('local broker', () => {
  it('delivers, retries transient failures, dead-letters final ones, and routes replies', async () => {
    let assignCalls = 0;
    const restartSeen: string[] = [];
    const assign = await endpoint((event) => {
      assignCalls += 1;
      if (assignCalls === 1) return { status: 503 };
      if (event.id === 'bad') return { status: 422 };
      return { status: 200, reply: assignmentChangedEvent({ swarm: { namespace: 'ns', name: 's', uid: 'u' }, version: 7, workers: [] }) };
    });
    const restart = await endpoint((event) => {
      restartSeen.push(event.type);
      return { status: 202 };
    });
    const deliveries: Delivery[] = [];
    const broker = createLocalBroker({
      triggers: loadTriggers(),
      subscribers: { 'swarm-assign': assign, 'swarm-restart': restart },
      onDelivery: (d) => deliveries.push(d),
      backoffScale: 0.01,
    });
    broker.publish(apiServerEvent({ verb: 'update', mode: 'resource', object: sts }));
    await broker.idle();
    expect(deliveries.filter((d) => d.subscriber === 'swarm-assign').map((d) => d.status)).toEqual([503, 200]);
    expect(restartSeen).toEqual(['info.k8slab.swarm.assignment.changed']);

    broker.publish(new CloudEvent({ ...apiServerEvent({ verb: 'update', mode: 'resource', object: sts }).toJSON(), id: 'bad' }));
    await broker.idle();
    expect(broker.deadLetters.map((d) => d.status)).toEqual([422]);
    broker.close();
  });
});
