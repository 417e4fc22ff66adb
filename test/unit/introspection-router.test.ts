import type { AddressInfo } from 'node:net';
import { get, type Server } from 'node:http';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { introspectionRouter } from '../../functions/introspection.js';
import { swarmView, type SwarmView } from '../../lib/introspection/view.js';

const view: SwarmView = swarmView({
  swarm: { metadata: { namespace: 'demo', name: 'web' }, status: { phase: 'Running' } },
  config: { version: 3, workloads: { 'web-0': { jobs: ['a'], version: 3 }, 'web-1': { jobs: ['b'], version: 3 } } },
  pendingRestarts: [],
});

const reads: string[] = [];
let server: Server;
let base: string;

beforeAll(async () => {
  const app = express();
  app.use(
    introspectionRouter(async (namespace, name) => {
      reads.push(`${namespace}/${name}`);
      if (name === 'broken') throw new Error('apiserver unavailable');
      return namespace === 'demo' && name === 'web' ? view : undefined;
    }),
  );
  server = app.listen(0, '127.0.0.1');
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
function rawGet(path: string): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const { hostname, port } = new URL(base);
    get({ hostname, port, path }, (res) => {
      let text = '';
      res.setEncoding('utf8').on('data', (c: string) => (text += c)).on('end', () => {
        try {
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) as unknown });
        } catch {
          resolve({ status: res.statusCode ?? 0, json: text });
        }
      });
    }).on('error', reject);
  });
}

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('GET /swarms/:namespace/:name', () => {
  it('answers JSON by default', async () => {
    for (const accept of [undefined, '*/*', 'application/json']) {
      const response = await fetch(`${base}/swarms/demo/web`, accept ? { headers: { accept } } : {});
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(await response.json()).toEqual(view);
    }
  });

  it('answers HTML to a browser', async () => {
    const response = await fetch(`${base}/swarms/demo/web`, {
      headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/html/);
    expect(response.headers.get('vary')).toMatch(/Accept/);
    expect(await response.text()).toContain('<tr data-worker="web-1">');
  });

  it('answers 404 with a JSON error for an unknown Swarm', async () => {
    const response = await fetch(`${base}/swarms/demo/nope`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({ error: 'swarm demo/nope not found', status: 404 });
  });

  it('answers 400 for names Kubernetes would not accept, without reading', async () => {
    const before = reads.length;
    for (const path of ['Demo/web', 'demo/web_1', 'demo/-web', `${'n'.repeat(64)}/web`, '%2e%2e/web', 'demo/%2e%2e', 'demo/%00']) {
      // Raw paths: fetch would resolve %2e%2e as a dot segment before sending.
      const response = await rawGet(`/swarms/${path}`);
      expect(response.status).toBe(400);
      expect(response.json).toMatchObject({ error: expect.stringMatching(/^(namespace|name): .*: not a DNS-1123 (label|subdomain)/), status: 400 });
    }
    expect(reads.length).toBe(before);
  });

  it('answers 500 with the reason when reading fails', async () => {
    const response = await fetch(`${base}/swarms/demo/broken`);
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: string }).error).toMatch(/apiserver unavailable/);
  });
});
