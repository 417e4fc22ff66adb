// Every answer the HTTP host gives to what a client sends, as one table:
// request → status (+ a substring of the error). Bad input gets a final 4xx with
// the JSON body {error, status} and never reaches the Kubernetes API; nothing a
// client sends is answered 500.
import { request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from '../../functions/app.js';
import type { KubeClient } from '../../lib/kube/client.js';
import { createLogger } from '../../lib/observability/logger.js';
import { createMetrics } from '../../lib/observability/metrics.js';
import { swarmOf } from '../support/fixtures.js';
import { MemoryKube } from '../support/memory-kube.js';

type Fn = 'assign' | 'restart';
interface Req {
  method?: string;
  /** Sent as is: `%2e%2e` stays a name, not a dot segment. */
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
}
interface Row {
  what: string;
  fn?: Fn;
  req: Req;
  status: number;
  /** A substring of `error` in the answer (non-2xx only). */
  error?: string;
}

const ADD = 'dev.knative.apiserver.resource.add';
const DELETE = 'dev.knative.apiserver.resource.delete';
const REF_UPDATE = 'dev.knative.apiserver.ref.update';
const CHANGED = 'info.k8slab.swarm.assignment.changed';
const PING = 'dev.knative.sources.ping';

const binary = (type: string, data: unknown, extra: Record<string, string> = {}): Req => ({
  headers: { 'ce-specversion': '1.0', 'ce-id': 'e1', 'ce-source': 'https://10.96.0.1:443', 'ce-type': type, 'content-type': 'application/json', ...extra },
  body: typeof data === 'string' ? data : JSON.stringify(data),
});
const withoutHeader = (req: Req, name: string): Req => ({ ...req, headers: Object.fromEntries(Object.entries(req.headers ?? {}).filter(([k]) => k !== name)) });
const structured = (envelope: Record<string, unknown>, contentType = 'application/cloudevents+json'): Req => ({
  headers: { 'content-type': contentType },
  body: JSON.stringify({ specversion: '1.0', id: 'e1', source: 'https://10.96.0.1:443', datacontenttype: 'application/json', ...envelope }),
});

/** A Swarm that does not exist: deleting it is a 2xx no-op after one read. */
const gone = { ...swarmOf(), metadata: { name: 'gone', namespace: 'ns' } };
const swarmNamed = (name: string, namespace = 'ns') => ({ ...swarmOf(), metadata: { name, namespace } });
const statefulSetNamed = (name: string) => ({ apiVersion: 'apps/v1', kind: 'StatefulSet', metadata: { name, namespace: 'ns' } });
const podOwnedBy = (owner: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'swarm-worker-0', namespace: 'ns', ownerReferences: [{ apiVersion: 'apps/v1', kind: 'StatefulSet', name: owner, controller: true }] },
});
const changed = (swarm: Record<string, string>, workers: unknown[] = ['swarm-worker-0']) =>
  binary(CHANGED, { swarm: { namespace: 'ns', name: 'swarm', uid: 'u1', ...swarm }, version: 2, workers });

const long = 'a'.repeat(300);

const rows: Row[] = [
  // Accepted: content types compared case-insensitively, parameters ignored.
  { what: 'binary, application/json', req: binary(DELETE, gone), status: 202 },
  { what: 'binary, application/json; charset=utf-8', req: binary(DELETE, gone, { 'content-type': 'application/json; charset=utf-8' }), status: 202 },
  { what: 'binary, application/json;charset=utf-8', req: binary(DELETE, gone, { 'content-type': 'application/json;charset=utf-8' }), status: 202 },
  { what: 'binary, Application/JSON', req: binary(DELETE, gone, { 'content-type': 'Application/JSON' }), status: 202 },
  { what: 'binary, leading whitespace', req: binary(DELETE, gone, { 'content-type': '  application/json' }), status: 202 },
  { what: 'structured', req: structured({ type: DELETE, data: gone }), status: 202 },
  { what: 'structured, ;charset=UTF-8', req: structured({ type: DELETE, data: gone }, 'application/cloudevents+json;charset=UTF-8'), status: 202 },
  { what: 'structured, Application/CloudEvents+JSON', req: structured({ type: DELETE, data: gone }, 'Application/CloudEvents+JSON'), status: 202 },
  { what: 'a dotted Swarm name (a subdomain)', req: binary(DELETE, swarmNamed('web.v2')), status: 202 },
  { what: 'a resync ping for a namespace with no Swarms (a no-op)', req: binary(PING, { namespace: 'empty' }), status: 202 },

  // The envelope: 400.
  { what: 'not a CloudEvent', req: { headers: { 'content-type': 'application/json' }, body: '{}' }, status: 400, error: 'not a CloudEvent' },
  { what: 'binary without ce-specversion', req: withoutHeader(binary(DELETE, gone), 'ce-specversion'), status: 400, error: 'missing required attribute specversion' },
  { what: 'binary, specversion 0.3', req: binary(DELETE, gone, { 'ce-specversion': '0.3' }), status: 400, error: 'unsupported specversion "0.3": Swarm takes CloudEvents 1.0 only' },
  { what: 'binary, specversion 9.9', req: binary(DELETE, gone, { 'ce-specversion': '9.9' }), status: 400, error: 'unsupported specversion "9.9"' },
  { what: 'binary without ce-id', req: withoutHeader(binary(DELETE, gone), 'ce-id'), status: 400, error: 'missing required attribute id' },
  { what: 'binary without ce-source', req: withoutHeader(binary(DELETE, gone), 'ce-source'), status: 400, error: 'missing required attribute source' },
  { what: 'binary with invalid JSON data', req: binary(ADD, '{"apiVersion": '), status: 400, error: 'not valid JSON' },
  { what: 'structured without specversion', req: { headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify({ id: 'e1', source: 's', type: DELETE, data: gone }) }, status: 400, error: 'missing required attribute specversion' },
  { what: 'structured, specversion 0.3', req: structured({ type: DELETE, data: gone, specversion: '0.3' }), status: 400, error: 'unsupported specversion "0.3"' },
  { what: 'structured without id', req: { headers: { 'content-type': 'application/cloudevents+json' }, body: JSON.stringify({ specversion: '1.0', source: 's', type: DELETE }) }, status: 400, error: 'missing required attribute id' },
  { what: 'structured, invalid JSON', req: { headers: { 'content-type': 'application/cloudevents+json' }, body: '{"id":' }, status: 400, error: 'not valid JSON' },
  { what: 'structured, empty body', req: { headers: { 'content-type': 'application/cloudevents+json' }, body: '' }, status: 400, error: 'empty body' },
  { what: 'structured, a JSON list', req: { headers: { 'content-type': 'application/cloudevents+json' }, body: '[]' }, status: 400, error: 'must be a JSON object' },

  // Formats we do not take: 415; too big: 413.
  { what: 'binary, text/plain', req: binary(ADD, 'x', { 'content-type': 'text/plain' }), status: 415, error: 'content type "text/plain"' },
  { what: 'binary, no content type', req: withoutHeader(binary(ADD, gone), 'content-type'), status: 415, error: '<none>' },
  { what: 'a batch', req: { headers: { 'content-type': 'application/cloudevents-batch+json' }, body: '[]' }, status: 415, error: 'batched' },
  { what: 'structured XML', req: { headers: { 'content-type': 'application/cloudevents+xml' }, body: '<e/>' }, status: 415, error: 'cloudevents+xml' },
  { what: 'an unknown content encoding', req: binary(DELETE, gone, { 'content-encoding': 'bogus' }), status: 415, error: 'unsupported content encoding' },
  { what: 'a body over the limit', req: binary(ADD, 'x'.repeat(4 * 1024 * 1024)), status: 413, error: 'limit' },
  { what: 'a corrupt gzip body', req: { ...binary(DELETE, gone, { 'content-encoding': 'gzip' }), body: Buffer.from('not gzip') }, status: 400, error: 'incorrect header check' },

  // Well formed, but not an event Swarm can act on: 422.
  { what: 'an unknown type', req: binary('com.example.unknown', '{}'), status: 422, error: 'unknown event type "com.example.unknown"' },
  { what: 'data not what the type says', req: binary(ADD, { kind: 'Swarm' }), status: 422, error: 'missing apiVersion' },
  { what: 'a StatefulSet event sent to restart', fn: 'restart', req: binary(ADD, statefulSetNamed('swarm-worker')), status: 422, error: 'does not handle StatefulSet' },
  { what: 'a resync ping without a namespace', req: binary(PING, { hello: 'world' }), status: 422, error: 'not a resync ping: missing namespace' },
  { what: 'a resync ping whose data is a list', req: binary(PING, ['swarm']), status: 422, error: 'data must be {"namespace": "<namespace>"}, got an array' },
  { what: 'a resync ping naming namespace ..', req: binary(PING, { namespace: '..' }), status: 422, error: 'data.namespace: "..": not a DNS-1123 label' },
  { what: 'a resync ping sent to restart', fn: 'restart', req: binary(PING, { namespace: 'ns' }), status: 422, error: 'does not handle resync ping' },
  { what: 'a Pod event sent to restart (Pod events go to assign alone)', fn: 'restart', req: binary(ADD, podOwnedBy('swarm-worker')), status: 422, error: 'does not handle Pod' },
  { what: 'a kind Swarm does not watch', req: binary(ADD, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'c', namespace: 'ns' } }), status: 422, error: 'unsupported kind Secret' },

  // Names the apiserver would refuse: 422 naming the field, before any API call.
  { what: 'Swarm name ..', req: binary(ADD, swarmNamed('..')), status: 422, error: 'data.metadata.name: "..": not a DNS-1123 subdomain' },
  { what: 'Swarm name .', req: binary(ADD, swarmNamed('.')), status: 422, error: 'data.metadata.name: ".": not a DNS-1123 subdomain' },
  { what: 'namespace ..', req: binary(ADD, swarmNamed('swarm', '..')), status: 422, error: 'data.metadata.namespace: "..": not a DNS-1123 label' },
  { what: 'namespace with a dot', req: binary(ADD, swarmNamed('swarm', 'a.b')), status: 422, error: 'data.metadata.namespace: "a.b": not a DNS-1123 label' },
  { what: 'a 300-character name', req: binary(ADD, swarmNamed(long)), status: 422, error: `data.metadata.name: "${'a'.repeat(60)}…" (300 characters): not a DNS-1123 subdomain` },
  { what: 'capitals', req: binary(ADD, swarmNamed('Swarm')), status: 422, error: 'data.metadata.name: "Swarm": not a DNS-1123 subdomain' },
  { what: 'NUL', req: binary(ADD, swarmNamed('a\u0000b')), status: 422, error: 'data.metadata.name: "a\\u0000b": not a DNS-1123 subdomain' },
  { what: 'emoji', req: binary(ADD, swarmNamed('🐝')), status: 422, error: 'data.metadata.name: "🐝": not a DNS-1123 subdomain' },
  { what: 'a name that is not a string', req: binary(ADD, { ...swarmOf(), metadata: { name: 7, namespace: 'ns' } }), status: 422, error: 'missing metadata.name' },
  { what: 'StatefulSet name with a dot (labels only)', req: binary(ADD, statefulSetNamed('a.b')), status: 422, error: 'data.metadata.name: "a.b": not a DNS-1123 label' },
  { what: 'StatefulSet name of 64 characters', req: binary(ADD, statefulSetNamed('s'.repeat(64))), status: 422, error: 'not a DNS-1123 label' },
  { what: 'ref mode, name ..', req: binary(REF_UPDATE, { apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', name: '..', namespace: 'ns' }), status: 422, error: 'data.name: "..": not a DNS-1123 subdomain' },
  { what: 'ref mode, namespace ..', req: binary(REF_UPDATE, { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'w', namespace: '..' }), status: 422, error: 'data.namespace: "..": not a DNS-1123 label' },
  { what: 'Pod name ..', req: binary(ADD, { ...podOwnedBy('swarm-worker'), metadata: { name: '..', namespace: 'ns' } }), status: 422, error: 'data.metadata.name: "..": not a DNS-1123 subdomain' },
  { what: 'Pod owned by StatefulSet ..', req: binary(ADD, podOwnedBy('..')), status: 422, error: 'ownerReferences[].name (the owning StatefulSet): "..": not a DNS-1123 label' },
  { what: 'assignment.changed, Swarm name ..', fn: 'restart', req: changed({ name: '..' }), status: 422, error: 'data.swarm.name: "..": not a DNS-1123 subdomain' },
  { what: 'assignment.changed, namespace ..', fn: 'restart', req: changed({ namespace: '..' }), status: 422, error: 'data.swarm.namespace: "..": not a DNS-1123 label' },
  { what: 'assignment.changed, worker ..', fn: 'restart', req: changed({}, ['swarm-worker-0', '..']), status: 422, error: 'data.workers[1]: "..": not a DNS-1123 subdomain' },

  // Routes: JSON 404 for what nobody serves; the introspection route checks names before reading.
  { what: 'an unknown route', req: { method: 'GET', path: '/nope' }, status: 404, error: 'no route for GET /nope' },
  { what: 'GET /', req: { method: 'GET', path: '/' }, status: 404, error: 'no route for GET /' },
  { what: 'PUT /', req: { method: 'PUT', path: '/', body: '{}' }, status: 404, error: 'no route for PUT /' },
  { what: 'introspection, name ..', req: { method: 'GET', path: '/swarms/ns/%2e%2e' }, status: 400, error: 'name: "..": not a DNS-1123 subdomain' },
  { what: 'introspection, namespace ..', req: { method: 'GET', path: '/swarms/%2e%2e/swarm' }, status: 400, error: 'namespace: "..": not a DNS-1123 label' },
  { what: 'introspection, capitals', req: { method: 'GET', path: '/swarms/ns/Swarm' }, status: 400, error: 'not a DNS-1123 subdomain' },
  { what: 'introspection, NUL', req: { method: 'GET', path: '/swarms/ns/a%00b' }, status: 400, error: 'not a DNS-1123 subdomain' },
  { what: 'introspection, a malformed escape', req: { method: 'GET', path: '/swarms/ns/%E0%A4%A' }, status: 400, error: 'decode' },
];

/** Every KubeClient call, so a test can say "never reached the API". */
function recording(kube: MemoryKube): { client: KubeClient; calls: string[] } {
  const calls: string[] = [];
  const client = new Proxy(kube, {
    get(target, prop, receiver) {
      const value: unknown = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${String(prop)}(${args.map((a) => JSON.stringify(a)).join(', ')})`);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { client, calls };
}

const quiet = createLogger({ name: 'test', destination: new Writable({ write: (_c, _e, cb) => cb() }) as never });

function send(port: number, req: Req): Promise<{ status: number; type: string; text: string }> {
  return new Promise((resolve, reject) => {
    const body = req.body === undefined ? undefined : Buffer.isBuffer(req.body) ? req.body : Buffer.from(req.body);
    const r = request(
      { host: '127.0.0.1', port, method: req.method ?? 'POST', path: req.path ?? '/', headers: { ...req.headers, ...(body ? { 'content-length': String(body.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type'] ?? ''), text: Buffer.concat(chunks).toString('utf8') }));
      },
    );
    r.on('error', reject);
    r.end(body);
  });
}

describe('HTTP answers, request by request', () => {
  const hosts = new Map<Fn, { port: number; calls: string[]; server: Server }>();
  beforeAll(async () => {
    for (const fn of ['assign', 'restart'] as const) {
      const { client, calls } = recording(new MemoryKube());
      const app = createApp({ function: fn, kube: client, log: quiet, metrics: createMetrics({ defaultMetrics: false }) });
      const server: Server = await new Promise((r) => {
        const s = app.listen(0, '127.0.0.1', () => r(s));
      });
      hosts.set(fn, { port: (server.address() as AddressInfo).port, calls, server });
    }
  });
  afterAll(async () => {
    for (const { server } of hosts.values()) await new Promise((r) => server.close(r));
  });

  it.each(rows.map((row) => [row.what, row] as const))('%s', async (_what, row) => {
    const host = hosts.get(row.fn ?? 'assign')!;
    host.calls.length = 0;
    const res = await send(host.port, row.req);
    expect({ status: res.status, body: res.text.slice(0, 500) }).toMatchObject({ status: row.status });
    if (row.status < 300) return;
    expect(res.type).toMatch(/^application\/json/);
    const body = JSON.parse(res.text) as { error: string; status: number };
    expect(Object.keys(body).sort()).toEqual(['error', 'status']);
    expect(body.status).toBe(row.status);
    expect(body.error).toContain(row.error);
    // Bad input is decided before any API call (only the introspection 404 reads).
    if (row.status !== 404) expect(host.calls).toEqual([]);
  });

  it('covers every answer a client can cause, and none is a 500', () => {
    expect(new Set(rows.map((r) => r.status))).toEqual(new Set([202, 400, 404, 413, 415, 422]));
  });

  it('a gzip-encoded event is inflated and accepted', async () => {
    const req = binary(DELETE, gone, { 'content-encoding': 'gzip' });
    const res = await send(hosts.get('assign')!.port, { ...req, body: gzipSync(Buffer.from(String(req.body))) });
    expect(res.status).toBe(202);
  });
});
