// FUNCTION=all (npm run serve, dev/serve.ts): one process with both functions,
// each on POST /functions/<name>, and nothing on POST / (no broker in front:
// the caller routes, as the Triggers would, assign's reply included).
import { Writable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { HTTP } from 'cloudevents';
import { start } from '../../functions/server.js';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { createLogger } from '../../lib/observability/logger.js';
import { createMetrics } from '../../lib/observability/metrics.js';
import { MemoryKube } from '../support/memory-kube.js';
import { swarmOf } from '../support/fixtures.js';

const quiet = createLogger({ name: 'test', destination: new Writable({ write: (_c, _e, cb) => cb() }) as never });

describe('FUNCTION=all', () => {
  let host: Awaited<ReturnType<typeof start>> | undefined;
  afterAll(() => host?.close());

  it('serves assign and restart side by side; a source event to assign, its reply to restart', async () => {
    const kube = new MemoryKube();
    const swarm = kube.addSwarm(swarmOf({ restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } }));
    kube.setStatefulSet('ns', 'swarm-worker', 2);
    host = await start({ FUNCTION: 'all', PORT: '0', HOST: '127.0.0.1' }, { kube, log: quiet, metrics: createMetrics({ defaultMetrics: false }) });
    const base = `http://127.0.0.1:${host.port}`;
    const message = HTTP.binary(apiServerEvent({ verb: 'add', mode: 'resource', object: swarm as never }));
    const post = (path: string, headers: Record<string, string>, body: string) => fetch(`${base}${path}`, { method: 'POST', headers, body });

    expect((await post('/', message.headers as Record<string, string>, message.body as string)).status).toBe(404);

    // The first assignment, before the pods are made, restarts nobody: no reply. Its reconcile's confirming look
    // lists the pods after the write and seals it: nothing is pending, and pods made after that read their shares.
    // (A pod listed then would be pinned by the seal, unable to tell it from one made while the write landed.)
    const first = await post('/functions/assign', message.headers as Record<string, string>, message.body as string);
    expect(first.status).toBe(202);
    expect(kube.configFor('ns', 'swarm-worker-config')).toMatch(/^version: 1$/m);
    expect(kube.configMaps.get('ns/swarm-worker-config')!.annotations['k8slab.info/restarts']).toBeUndefined();
    kube.startPod('ns', 'swarm-worker', 0);
    kube.startPod('ns', 'swarm-worker', 1);

    // A third worker changes the running pods' shares (policy Restart): assign, told by the StatefulSet's event, tells restart, which deletes a pod.
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    kube.startPod('ns', 'swarm-worker', 2);
    const resized = HTTP.binary(apiServerEvent({ verb: 'update', mode: 'resource', object: { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'swarm-worker', namespace: 'ns' } } as never }));
    const assigned = await post('/functions/assign', resized.headers as Record<string, string>, resized.body as string);
    expect(assigned.status).toBe(200);
    expect(assigned.headers.get('ce-type')).toBe('info.k8slab.swarm.assignment.changed');
    expect(kube.configFor('ns', 'swarm-worker-config')).toMatch(/^version: 2$/m);

    const reply = Object.fromEntries([...assigned.headers].filter(([h]) => h.startsWith('ce-') || h === 'content-type'));
    const restarted = await post('/functions/restart', reply, await assigned.text());
    expect(restarted.status).toBe(202);
    expect(kube.writes.some((w) => w.op === 'deletePod')).toBe(true);
  });
});
