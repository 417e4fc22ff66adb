// A minimal Kubernetes API client, as the pod: the ServiceAccount's token and
// CA mounted in the pod, the API server from KUBERNETES_SERVICE_HOST/PORT. A
// worker reads and writes three kinds of object (its Lease, and on SIGTERM its
// ConfigMap and StatefulSet); a full client costs most of a worker's start-up.
// The token is read again once a minute: the kubelet rotates it.
import { readFileSync } from 'node:fs';
import { request as httpsRequest } from 'node:https';
import { join } from 'node:path';

export const SERVICE_ACCOUNT_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** A refused or failed request; `code` is the HTTP status (undefined: no answer). */
export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export interface KubeClient {
  /** JSON in, JSON out; rejects with ApiError on any status but 2xx. */
  request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T>;
}

export interface InClusterOptions {
  /** Where the token, ca.crt and namespace are (default: the pod's mount). */
  serviceAccountDir?: string;
  /** Default: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT. */
  host?: string;
  port?: number;
  /** Per request (default 10 s). */
  timeoutMs?: number;
}

/** In a pod (or anything that looks like one): the API server and the mounted credentials are there. */
export function inCluster(options: InClusterOptions = {}): boolean {
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  try {
    readFileSync(join(dir, 'token'));
  } catch {
    return false;
  }
  return Boolean(options.host ?? process.env.KUBERNETES_SERVICE_HOST);
}

/** The namespace of the mounted ServiceAccount, if any. */
export function mountedNamespace(serviceAccountDir: string = SERVICE_ACCOUNT_DIR): string | undefined {
  try {
    return readFileSync(join(serviceAccountDir, 'namespace'), 'utf8').trim() || undefined;
  } catch {
    return undefined;
  }
}

export function inClusterClient(options: InClusterOptions = {}): KubeClient {
  const dir = options.serviceAccountDir ?? SERVICE_ACCOUNT_DIR;
  const host = options.host ?? process.env.KUBERNETES_SERVICE_HOST ?? '';
  const port = options.port ?? Number(process.env.KUBERNETES_SERVICE_PORT ?? 443);
  const timeoutMs = options.timeoutMs ?? 10_000;
  let ca: Buffer | undefined;
  let token = { value: '', readAt: 0 };
  const bearer = (): string => {
    if (Date.now() - token.readAt > 60_000) token = { value: readFileSync(join(dir, 'token'), 'utf8').trim(), readAt: Date.now() };
    return token.value;
  };
  return {
    request<T>(method: 'GET' | 'POST' | 'PUT', path: string, body?: unknown): Promise<T> {
      ca ??= readFileSync(join(dir, 'ca.crt'));
      const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
      const headers: Record<string, string | number> = { authorization: `Bearer ${bearer()}`, accept: 'application/json' };
      if (payload) Object.assign(headers, { 'content-type': 'application/json', 'content-length': payload.length });
      return new Promise<T>((resolve, reject) => {
        const req = httpsRequest({ hostname: host, port, path, method, ca, headers, timeout: timeoutMs }, (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (chunk: Buffer) => chunks.push(chunk));
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) {
              try {
                resolve(JSON.parse(text) as T);
              } catch (error) {
                reject(new ApiError(`${method} ${path}: unreadable answer: ${String(error)}`, status));
              }
              return;
            }
            let message = text.slice(0, 300);
            try {
              message = (JSON.parse(text) as { message?: string }).message ?? message;
            } catch {
              // not a Status object: keep the text
            }
            reject(new ApiError(`${method} ${path}: ${status}: ${message}`, status));
          });
          res.on('error', (error) => reject(new ApiError(`${method} ${path}: ${error.message}`, undefined)));
        });
        req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on('error', (error) => reject(new ApiError(`${method} ${path}: ${error.message}`, undefined)));
        req.end(payload);
      });
    },
  };
}

/** GET that answers undefined on 404. */
export async function getOrNone<T>(client: KubeClient, path: string): Promise<T | undefined> {
  try {
    return await client.request<T>('GET', path);
  } catch (error) {
    if (error instanceof ApiError && error.code === 404) return undefined;
    throw error;
  }
}
