// knative/base/triggers.yaml's filters evaluated by Knative itself: a Broker
// of its own holding those Triggers, each subscriber replaced by a recorder in
// this process (pods reach it at the node's bridge address), and the events of
// test/support/routing-cases.ts posted to the Broker's ingress. Dev tooling
// for knative-e2e.
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { CloudEvent } from 'cloudevents';
import { splitDocuments, type Manifest } from '../../bin/deploy-plan.js';
import { repoRoot } from '../controlplane/cluster.js';
import { postEvent } from './swarm-on-knative.js';

export const ROUTING_BROKER = 'routing';

/** knative/base's Broker and Triggers in `namespace`, each Trigger delivering to `${recorderUrl}/<its name>`, with no delivery spec (no dead-letter sink there). */
export function routingManifests(namespace: string, recorderUrl: string): Manifest[] {
  const base = (file: string) => splitDocuments(readFileSync(join(repoRoot, 'knative', 'base', file), 'utf8'));
  const withoutDelivery = (spec: unknown) => {
    const { delivery: _delivery, ...rest } = (spec ?? {}) as Record<string, unknown>;
    return rest;
  };
  const brokers = base('broker.yaml')
    .filter((doc) => doc.kind === 'Broker')
    .map((broker): Manifest => ({ ...broker, metadata: { ...broker.metadata, name: ROUTING_BROKER, namespace }, spec: withoutDelivery(broker.spec) }));
  const triggers = base('triggers.yaml')
    .filter((doc) => doc.kind === 'Trigger')
    .map((trigger): Manifest => {
      const name = trigger.metadata?.name ?? '';
      return { ...trigger, metadata: { name, namespace }, spec: { ...withoutDelivery(trigger.spec), broker: ROUTING_BROKER, subscriber: { uri: `${recorderUrl}/${name}` } } };
    });
  return [...brokers, ...triggers];
}

export interface Delivered {
  /** The Trigger that delivered it (the path it was posted to). */
  readonly trigger: string;
  readonly id: string;
}

export interface Recorder {
  readonly port: number;
  readonly delivered: Delivered[];
  close(): Promise<void>;
}

/** Answers 200 to every delivery and records which Trigger's path took which event id. */
export async function startRecorder(host = '0.0.0.0'): Promise<Recorder> {
  const delivered: Delivered[] = [];
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      delivered.push({ trigger: (req.url ?? '/').slice(1), id: String(req.headers['ce-id'] ?? '') });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  return {
    port: (server.address() as AddressInfo).port,
    delivered,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    }),
  };
}

/** Posts `event` to this Broker's path of the MT broker's ingress (`ingress` = http://<its ClusterIP>); the ingress answers 202 when it took it. */
export const postToBroker = (ingress: string, namespace: string, event: CloudEvent<unknown>): Promise<number> => postEvent(`${ingress}/${namespace}/${ROUTING_BROKER}`, event);
