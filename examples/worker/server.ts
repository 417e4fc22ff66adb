// The worker's HTTP surface: its current share (the original's remote
// introspection: the jobs it runs, the config version it loaded and when), a
// liveness check (/healthz: the SDK's health, a callback overrun fails it,
// docs/worker-protocol.md W24) and a readiness check (/readyz: it has read its
// share, possibly none when no config exists yet, and is not stopping; with
// failover, the SDK's readiness: not while fenced or its heartbeat is stale).
// Distinct on purpose: a worker that is not ready must not be restarted for it.
import { createServer, type Server } from 'node:http';
import type { Readiness } from '../../sdk/typescript/src/fence.js';
import type { Share } from '../../sdk/typescript/src/share.js';

export interface AssignmentView {
  readonly pod: string;
  readonly uid?: string | undefined;
  /** The jobs this worker runs now, at its share's version. */
  readonly share: Share;
  /** The top-level config version the share was read from; undefined before the first config. */
  readonly configVersion: number | undefined;
  /** When the config it runs was read (ISO time). */
  readonly loadedAt: string | undefined;
  /** Stopping to exit: it runs nothing and loads nothing more. */
  readonly stopping?: boolean;
}

/**
 * `healthy`: the worker's own check (default: always); /healthz answers 503 while it fails.
 * `ready`: the SDK's readiness (Worker.ready); without it, ready once the share was read.
 */
export function createWorkerServer(view: () => AssignmentView, healthy: () => Promise<boolean> = async () => true, ready?: () => Promise<Readiness>): Server {
  return createServer((request, response) => {
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body) + '\n');
    };
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, { error: 'method not allowed' });
    if (path === '/healthz') {
      void healthy().then(
        (ok) => (ok ? send(200, { status: 'ok' }) : send(503, { status: 'unhealthy' })),
        () => send(503, { status: 'unhealthy' }),
      );
      return;
    }
    if (path === '/readyz' && ready) {
      void ready().then(
        (r) => (r.ready ? send(200, { status: 'ready', configVersion: view().configVersion }) : send(503, { error: r.reason, status: 503 })),
        () => send(503, { error: 'readiness check failed', status: 503 }),
      );
      return;
    }
    if (path === '/readyz') {
      const { loadedAt, configVersion, stopping = false } = view();
      if (stopping) return send(503, { error: 'stopping', status: 503 });
      if (loadedAt === undefined) return send(503, { error: 'share not read yet', status: 503 });
      return send(200, { status: 'ready', configVersion });
    }
    if (path === '/assignment') {
      const { pod, uid, share, configVersion, loadedAt, stopping = false } = view();
      return send(200, { pod, ...(uid ? { uid } : {}), jobs: share.jobs, version: share.version, configVersion, loadedAt, stopping });
    }
    return send(404, { error: 'not found' });
  });
}
