// The HTTP host: answers chosen for Knative's dispatcher, reply events in binary mode.
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { HTTP } from 'cloudevents';
import express from 'express';
import { createApp } from '../../functions/app.js';
import { SUMMARY_HEADER, eventRoute } from '../../functions/http.js';
import { createLogger } from '../../lib/observability/logger.js';
import { createMetrics } from '../../lib/observability/metrics.js';
import { MemoryKube } from '../support/memory-kube.js';
import { swarmOf } from '../support/fixtures.js';
import { Writable } from 'node:stream';
import { KubeError } from '../../lib/kube/errors.js';

const quiet = createLogger({ name: 'test', destination: new Writable({ write: (_c, _e, cb) => cb() }) as never });

function ceHeaders(type: string, id = 'e1'): Record<string, string> {
  return { 'ce-specversion': '1.0', 'ce-id': id, 'ce-source': 'https://127.0.0.1:6443', 'ce-type': type, 'content-type': 'application/json' };
}
const swarmObject = swarmOf();
/** Restarted to load its share (policy Restart, which breaks first). */
const restartingSwarm = swarmOf({ restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } });

async function serve(fn: 'assign' | 'restart', kube: MemoryKube) {
  const app = createApp({ function: fn, kube, log: quiet, metrics: createMetrics({ defaultMetrics: false }) });
  const server: Server = await new Promise((r) => {
    const s = app.listen(0, '127.0.0.1', () => r(s));
  });
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, close: () => new Promise<void>((r) => server.close(() => r())) };
}

/** A StatefulSet of `replicas` running pods in ns, grown from `from` (its pods below that already run). */
function runningPool(kube: MemoryKube, statefulSet: string, replicas: number, from = 0): void {
  kube.setStatefulSet('ns', statefulSet, replicas);
  for (let ordinal = from; ordinal < replicas; ordinal++) kube.startPod('ns', statefulSet, ordinal);
}

describe('assign over HTTP: the reply to restart', () => {
  it('replies assignment.changed in binary mode while restarts are due, the same event again on a duplicate', async () => {
    const kube = new MemoryKube();
    kube.addSwarm(restartingSwarm);
    kube.setStatefulSet('ns', 'swarm-worker', 2);
    const host = await serve('assign', kube);
    try {
      const post = (id: string, object: object = restartingSwarm) =>
        fetch(`${host.url}/`, { method: 'POST', headers: ceHeaders('dev.knative.apiserver.resource.update', id), body: JSON.stringify(object) });
      // The first assignment, before the pods are made: nobody to restart, no reply. Pods made after the look that
      // sealed it (its reconcile's confirming look) read their shares; one listed then would be pinned by the seal.
      expect((await post('e1')).status).toBe(202);
      runningPool(kube, 'swarm-worker', 2);
      // A third worker, and the StatefulSet's event: the shares of running pods change, and policy Restart restarts them.
      runningPool(kube, 'swarm-worker', 3, 2);
      const statefulSet = { apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name: 'swarm-worker', namespace: 'ns' } };
      const res = await post('e2', statefulSet);
      expect(res.status).toBe(200);
      const reply = HTTP.toEvent({ headers: Object.fromEntries(res.headers), body: await res.text() }) as { id: string };
      expect(reply).toMatchObject({ type: 'info.k8slab.swarm.assignment.changed', data: { swarm: { namespace: 'ns', name: 'swarm' }, version: 2 } });
      // Until the restarts are done, every reconcile tells restart again (a lost reply is resent), as the same event.
      const writes = kube.writes.length;
      const dup = await post('e2', statefulSet);
      expect(dup.status).toBe(200);
      expect(dup.headers.get('ce-id')).toBe(reply.id);
      expect(kube.writes.length).toBe(writes);
    } finally {
      await host.close();
    }
  });
});

describe('assign over HTTP: a resync with restarts due in several Swarms', () => {
  it('tells restart of one per ping, drawn at random, so one that stays due starves none', async () => {
    const kube = new MemoryKube();
    for (const name of ['a', 'b']) {
      kube.addSwarm(swarmOf({ statefulSetName: `${name}-worker`, configMapName: `${name}-config`, restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } }, name));
      kube.setStatefulSet('ns', `${name}-worker`, 2);
    }
    const host = await serve('assign', kube);
    const ping = () => fetch(`${host.url}/`, { method: 'POST', headers: ceHeaders('dev.knative.sources.ping'), body: JSON.stringify({ namespace: 'ns' }) });
    const random = vi.spyOn(Math, 'random');
    try {
      // First assignments, sealed before the pods are made (a pod listed then would be pinned by the seal): nobody to restart.
      expect((await ping()).status).toBe(202);
      for (const name of ['a', 'b']) runningPool(kube, `${name}-worker`, 3);
      const told = [];
      for (const draw of [0, 0.99]) {
        random.mockReturnValueOnce(draw);
        const res = await ping();
        expect(res.status).toBe(200);
        told.push((HTTP.toEvent({ headers: Object.fromEntries(res.headers), body: await res.text() }) as { data: { swarm: { name: string } } }).data.swarm.name);
      }
      expect(told).toEqual(['a', 'b']);
    } finally {
      random.mockRestore();
      await host.close();
    }
  });
});

describe('assign over HTTP', () => {
  const kube = new MemoryKube();
  let host: Awaited<ReturnType<typeof serve>>;
  beforeAll(async () => {
    kube.addSwarm(swarmObject);
    runningPool(kube, 'swarm-worker', 2);
    host = await serve('assign', kube);
  });
  afterAll(() => host.close());

  const post = (headers: Record<string, string>, body: string) => fetch(`${host.url}/`, { method: 'POST', headers, body });

  it('answers health checks', async () => {
    expect((await fetch(`${host.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${host.url}/readyz`)).status).toBe(200);
  });

  it('answers a Swarm event that restarts nobody 202 with no reply (restart is not woken), and a duplicate writes nothing', async () => {
    const res = await post(ceHeaders('dev.knative.apiserver.resource.add'), JSON.stringify(swarmObject));
    expect(res.status).toBe(202);
    expect(res.headers.get('ce-type')).toBeNull();
    expect(kube.configFor('ns', 'swarm-worker-config')).toMatch(/^version: 1$/m);
    const writes = kube.writes.length;
    const dup = await post(ceHeaders('dev.knative.apiserver.resource.add'), JSON.stringify(swarmObject));
    expect(dup.status).toBe(202);
    expect(kube.writes.length).toBe(writes);
  });

  it.each([
    ['not a CloudEvent', { 'content-type': 'application/json' }, '{}', 400, /not a CloudEvent/],
    ['unknown type', ceHeaders('com.example.unknown'), '{}', 422, /com\.example\.unknown/],
    ['wrong content type', { ...ceHeaders('dev.knative.apiserver.resource.add'), 'content-type': 'text/plain' }, 'x', 415, /content type/],
    ['object not what the type says', ceHeaders('dev.knative.apiserver.resource.add'), '{"kind":"Swarm"}', 422, /metadata|apiVersion/],
    ['its own reply sent back to assign', ceHeaders('info.k8slab.swarm.assignment.changed'), JSON.stringify({ swarm: { namespace: 'ns', name: 'swarm-worker', uid: 'u' }, version: 2, workers: ['swarm-worker-0'] }), 422, /does not handle assignment.changed/],
  ])('rejects %s with a final 4xx naming the problem and writes nothing', async (_what, headers, body, status, problem) => {
    const writes = kube.writes.length;
    const res = await post(headers as Record<string, string>, body);
    expect(res.status).toBe(status);
    const json = (await res.json()) as { error: string };
    expect(json.error).toMatch(problem);
    expect(kube.writes.length).toBe(writes);
  });

  it('rejects a body over the limit with 413', async () => {
    const res = await post(ceHeaders('dev.knative.apiserver.resource.add'), 'x'.repeat(4 * 1024 * 1024));
    expect(res.status).toBe(413);
    expect(((await res.json()) as { error: string }).error).toMatch(/limit/);
  });

  it('answers 503 on a transient API failure so the broker retries', async () => {
    kube.fail('listSwarmsNaming');
    const res = await post(ceHeaders('dev.knative.apiserver.resource.update', 'e9'), JSON.stringify(swarmObject));
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: string }).error).toMatch(/injected/);
  });

  it('shows who owns what at /swarms/:namespace/:name, read from the cluster', async () => {
    const res = await fetch(`${host.url}/swarms/ns/swarm`);
    expect(res.status).toBe(200);
    const view = (await res.json()) as { version: number; workers: Array<{ name: string; jobs: string[] }>; lastChange?: { moves: unknown[] } };
    expect(view.version).toBe(1);
    expect(view.workers.map((w) => w.name)).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    expect(view.workers.flatMap((w) => w.jobs)).toHaveLength(27);
    expect(view.lastChange?.moves).toHaveLength(27); // the first assignment: every stream is new
    expect((await fetch(`${host.url}/swarms/ns/nope`)).status).toBe(404);
  });

  it('answers 2xx for an event about a Swarm that no longer exists', async () => {
    const gone = { ...swarmObject, metadata: { name: 'deleted', namespace: 'ns' } };
    const res = await post(ceHeaders('dev.knative.apiserver.resource.delete'), JSON.stringify(gone));
    expect(res.status).toBe(202);
    // No body (Knative's broker filter would take one for a reply event); the summary is a header.
    expect(await res.text()).toBe('');
    expect(JSON.parse(res.headers.get(SUMMARY_HEADER) ?? '')).toMatchObject({ swarms: [{ swarm: 'ns/deleted', result: 'gone' }] });
  });

  it('logs a defect with its stack, and a Kubernetes failure without one', async () => {
    const lines: Array<{ level: number; msg: string; err?: { type: string; stack: string } }> = [];
    const log = createLogger({ name: 'test', destination: new Writable({ write: (c, _e, cb) => (lines.push(JSON.parse(String(c))), cb()) }) as never });
    const app = express();
    const failing = (err: () => Error) => ({ name: 'assign' as const, accepts: () => true, handle: async () => { throw err(); } });
    app.use('/bug', eventRoute({ functions: [failing(() => new TypeError('x is undefined'))], log }));
    app.use('/kube', eventRoute({ functions: [failing(() => new KubeError('Transient', 503, 'etcd timeout', 'GET swarms'))], log }));
    const server = app.listen(0);
    try {
      const port = (server.address() as AddressInfo).port;
      for (const path of ['bug', 'kube']) {
        const res = await fetch(`http://127.0.0.1:${port}/${path}/`, { method: 'POST', headers: ceHeaders('dev.knative.apiserver.resource.update'), body: JSON.stringify(swarmObject) });
        expect(res.status).toBeGreaterThanOrEqual(500);
      }
      expect(lines).toMatchObject([
        { level: 50, msg: 'failed unexpectedly, broker will retry', err: { type: 'TypeError' } },
        { level: 40, msg: 'failed, broker will retry' },
      ]);
      expect(lines[0]?.err?.stack).toMatch(/TypeError: x is undefined\n\s+at /);
      expect(lines[1]).not.toHaveProperty('err');
    } finally {
      server.close();
    }
  });

  it('keeps the summary header ASCII and bounded, however long the messages', async () => {
    const app = express();
    const swarms = Array.from({ length: 500 }, (_, i) => ({ swarm: `ns/s-${i}`, result: 'blocked', message: `réplicas → ${'x'.repeat(50)} …` }));
    const fn = { name: 'assign' as const, accepts: () => true, handle: async () => ({ status: 202 as const, summary: { swarms } }) };
    app.use(eventRoute({ functions: [fn], log: quiet }));
    const server = app.listen(0);
    try {
      const port = (server.address() as AddressInfo).port;
      const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: ceHeaders('dev.knative.apiserver.resource.update'), body: JSON.stringify(swarmObject) });
      expect(res.status).toBe(202);
      const header = res.headers.get(SUMMARY_HEADER) ?? '';
      expect(header.length).toBeLessThanOrEqual(4096);
      expect(/^[\x20-\x7e]*$/.test(header)).toBe(true);
      const summary = JSON.parse(header) as { swarms: Array<{ message: string }>; truncated: number };
      expect(summary.truncated).toBe(500);
      expect(summary.swarms[0]?.message.startsWith('réplicas → ')).toBe(true);
    } finally {
      server.close();
    }
  });
});
