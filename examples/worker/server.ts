// The worker's HTTP surface: its current share (the original's remote
// introspection: the jobs it runs, the config version it loaded and when) and
// a liveness check (the SDK's health: a callback overrun, docs/worker-protocol.md W24).
import { createServer, type Server } from 'node:http';
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

/** `healthy`: the worker's own check (default: always); /healthz answers 503 while it fails. */
export function createWorkerServer(view: () => AssignmentView, healthy: () => Promise<boolean> = async () => true): Server {
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
    if (path === '/assignment') {
      const { pod, uid, share, configVersion, loadedAt, stopping = false } = view();
      return send(200, { pod, ...(uid ? { uid } : {}), jobs: share.jobs, version: share.version, configVersion, loadedAt, stopping });
    }
    return send(404, { error: 'not found' });
  });
}
