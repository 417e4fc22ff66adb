// FUNCTION=all (npm run serve, dev/serve.ts): one process with both functions
// behind the local broker on POST /, routing by knative/base/triggers.yaml,
// replies included.
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { HTTP } from 'cloudevents';
import { serveAll, type ServedAll } from '../../dev/serve.js';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { createLogger } from '../../lib/observability/logger.js';
import { createMetrics } from '../../lib/observability/metrics.js';
import { MemoryKube } from '../support/memory-kube.js';
import { swarmOf } from '../support/fixtures.js';

const quiet = createLogger({ name: 'test', destination: new Writable({ write: (_c, _e, cb) => cb() }) as never });

describe('FUNCTION=all', () => {
  let host: ServedAll | undefined;
  afterAll(() => host?.close());

  it('routes a source event to assign and its reply to restart, as the Knative broker would', async () => {
    const kube = new MemoryKube();
    const swarm = kube.addSwarm(swarmOf());
    kube.setStatefulSet('ns', 'swarm-worker', 2);
    kube.startPod('ns', 'swarm-worker', 0);
    kube.startPod('ns', 'swarm-worker', 1);
    const deliveries: string[] = [];
    host = await serveAll(
      { PORT: '0', HOST: '127.0.0.1' },
      { kube, log: quiet, metrics: createMetrics({ defaultMetrics: false }), onDelivery: (d) => deliveries.push(`${d.subscriber} ${d.event.type} ${d.status}`) },
    );
    const message = HTTP.binary(apiServerEvent({ verb: 'add', mode: 'resource', object: swarm as never }));
    const res = await fetch(`http://127.0.0.1:${host.port}/`, { method: 'POST', headers: message.headers as Record<string, string>, body: message.body as string });
    expect(res.status).toBe(202);
    await host.broker.idle();
    expect(deliveries).toEqual([
      'swarm-assign dev.knative.apiserver.resource.add 200',
      'swarm-restart info.k8slab.swarm.assignment.changed 202',
    ]);
    expect(kube.configFor('ns', 'swarm-worker-config')).toMatch(/^version: 1$/m);
  });
});
