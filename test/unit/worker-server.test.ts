import { afterEach, describe, expect, it } from 'vitest';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { createWorkerServer, type AssignmentView } from '../../examples/worker/server.js';

let server: Server | undefined;

async function serve(view: () => AssignmentView): Promise<string> {
  server = createWorkerServer(view);
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

describe('reference worker HTTP', () => {
  it('serves the current share on GET /assignment, read at request time', async () => {
    let view: AssignmentView = { pod: 'swarm-worker-0', share: { jobs: ['stream:a'], version: 1 }, configVersion: 1, loadedAt: 't1' };
    const base = await serve(() => view);
    expect(await (await fetch(`${base}/assignment`)).json()).toEqual({
      pod: 'swarm-worker-0',
      jobs: ['stream:a'],
      version: 1,
      configVersion: 1,
      loadedAt: 't1',
      stopping: false,
    });
    view = { ...view, share: { jobs: ['stream:b', 'stream:c'], version: 2 }, configVersion: 2 };
    const body = (await (await fetch(`${base}/assignment`)).json()) as { jobs: string[]; version: number };
    expect(body.jobs).toEqual(['stream:b', 'stream:c']);
    expect(body.version).toBe(2);
  });

  it('answers /healthz with 200 and unknown paths with 404', async () => {
    const base = await serve(() => ({ pod: 'p', share: { jobs: [], version: -1 }, configVersion: undefined, loadedAt: undefined }));
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);
    expect((await fetch(`${base}/assignment`, { method: 'POST' })).status).toBe(405);
  });

  it('/readyz: 503 until the share has been read (none yet is a share), 200 then, 503 once stopping; /healthz answers throughout', async () => {
    let view: AssignmentView = { pod: 'p', share: { jobs: [], version: -1 }, configVersion: undefined, loadedAt: undefined };
    const base = await serve(() => view);
    const ready = async () => {
      const response = await fetch(`${base}/readyz`);
      return { status: response.status, body: (await response.json()) as Record<string, unknown> };
    };
    expect(await ready()).toEqual({ status: 503, body: { error: 'share not read yet', status: 503 } });
    view = { ...view, loadedAt: '2026-01-01T00:00:00.000Z' };
    expect((await ready()).status).toBe(200);
    view = { ...view, configVersion: 3, share: { jobs: ['a'], version: 1 } };
    expect(await ready()).toEqual({ status: 200, body: { status: 'ready', configVersion: 3 } });
    view = { ...view, stopping: true };
    expect(await ready()).toEqual({ status: 503, body: { error: 'stopping', status: 503 } });
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
  });
});
