// The worker's HTTP surface: its current share (the original's remote
// introspection) and a liveness check.
import { createServer, type Server } from 'node:http';
import type { Share } from './share.js';

export interface AssignmentView {
  readonly pod: string;
  readonly share: Share;
  /** The top-level config version the share was read from; undefined before the first config. */
  readonly configVersion: number | undefined;
  readonly loadedAt: string | undefined;
}

export function createWorkerServer(view: () => AssignmentView): Server {
  return createServer((request, response) => {
    const send = (status: number, body: unknown): void => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body) + '\n');
    };
    const path = (request.url ?? '/').split('?')[0];
    if (request.method !== 'GET' && request.method !== 'HEAD') return send(405, { error: 'method not allowed' });
    if (path === '/healthz') return send(200, { status: 'ok' });
    if (path === '/assignment') {
      const { pod, share, configVersion, loadedAt } = view();
      return send(200, { pod, jobs: share.jobs, version: share.version, configVersion, loadedAt });
    }
    return send(404, { error: 'not found' });
  });
}
