// The HTTP host of the functions. One image, one entry point: env FUNCTION
// (required) picks `assign` or `restart` (a Knative Service each), or `all`
// (both, for a local run).
//   POST /           CloudEvents (FUNCTION=assign|restart)
//   POST /functions/<name>  each function (FUNCTION=all, `npm run serve`: whoever
//                    posts there routes)
//   GET  /healthz /readyz /metrics /swarms/:namespace/:name
// The app itself (routes, the functions' environment) is functions/app.ts.
import type { Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { createK8sClient, loadKubeConfig, unreachableClient } from '../lib/kube/k8s-client.js';
import { createLogger } from '../lib/observability/logger.js';
import { createMetrics } from '../lib/observability/metrics.js';
import { kubeSpan } from '../lib/observability/tracing/instrumentation.js';
import { initTracing } from '../lib/observability/tracing/setup.js';
import { createApp, functionFromEnv, type AppOptions } from './app.js';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

interface Started {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Starts a host from the environment: FUNCTION, PORT, KUBECONFIG, LOG_LEVEL, OTEL_*. */
interface StartExtras extends Partial<AppOptions> {
  /** Extra span processors (tests' in-memory exporter). */
  spanProcessors?: SpanProcessor[];
}

export async function start(env: NodeJS.ProcessEnv = process.env, extra: StartExtras = {}): Promise<Started> {
  const fn = functionFromEnv(env.FUNCTION);
  const log = extra.log ?? createLogger({ name: `swarm-${fn}` });
  const tracing = initTracing({ serviceName: `swarm-${fn}`, ...(extra.spanProcessors ? { spanProcessors: extra.spanProcessors } : {}) });
  const metrics = extra.metrics ?? createMetrics({ defaultLabels: { function: fn } });
  let kube = extra.kube;
  if (!kube) {
    try {
      kube = createK8sClient(loadKubeConfig(env.KUBECONFIG), {
        instrument: (call, run, responseStatus) =>
          kubeSpan(call.verb, call.resource, run, { namespace: call.namespace, ...(call.name ? { name: call.name } : {}), metrics, responseStatus }),
      });
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      log.warn({ reason }, 'no Kubernetes configuration; events will be answered 503 until there is one');
      kube = unreachableClient(reason);
    }
  }
  const app = createApp({ function: fn, kube, log, metrics, ...(extra.now ? { now: extra.now } : {}), ...(extra.shortcuts ? { shortcuts: extra.shortcuts } : {}) });
  const port = Number(env.PORT ?? 8080);
  const server = await new Promise<Server>((resolve, reject) => {
    const s = app.listen(port, env.HOST ?? '0.0.0.0', () => resolve(s));
    s.once('error', reject);
  });
  const address = server.address();
  const bound = typeof address === 'object' && address ? address.port : port;
  log.info({ function: fn, port: bound, exporters: tracing.exporters }, 'listening');
  return {
    server,
    port: bound,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await tracing.forceFlush().catch(() => undefined);
    },
  };
}

// Run directly (node dist/functions/server.js, the image's bundle functions.mjs, npm run serve): start and stop on SIGTERM/SIGINT.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  start().then(
    (started) => {
      const stop = () => void started.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    },
    (err: unknown) => {
      process.stderr.write(`swarm: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
