// The HTTP host of the functions. One image, one entry point: env FUNCTION
// (required) picks `assign` or `restart` (a Knative Service each), or `all`
// (both, for a local run).
//   POST /           CloudEvents (FUNCTION=assign|restart)
//   POST /functions/<name>  each function (FUNCTION=all; `npm run serve` puts the
//                    local broker of dev/broker on POST /)
//   GET  /healthz /readyz /metrics /swarms/:namespace/:name
import express from 'express';
import type { Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import type { KubeClient } from '../lib/kube/client.js';
import { createK8sClient, loadKubeConfig, unreachableClient } from '../lib/kube/k8s-client.js';
import { createLogger, type Logger } from '../lib/observability/logger.js';
import { createMetrics, forgetAssignment, metricsHandler, recordAssignmentSize, type Metrics } from '../lib/observability/metrics.js';
import { kubeSpan, recordConflictRetry } from '../lib/observability/tracing/instrumentation.js';
import { initTracing } from '../lib/observability/tracing/setup.js';
import { createCoalescer } from '../lib/reconcilers/coalesce.js';
import type { ReconcileEnv } from '../lib/reconcilers/env.js';
import { assignFunction } from './assign/index.js';
import type { SwarmFunction } from './function.js';
import { eventRoute, jsonErrors, notFound } from './http.js';
import { introspectionRouter } from './introspection.js';
import { readSwarmView } from './introspection-read.js';
import { restartFunction } from './restart/index.js';
import type { SpanProcessor } from '@opentelemetry/sdk-trace-base';

export type FunctionChoice = 'assign' | 'restart' | 'all';

export interface AppOptions {
  function: FunctionChoice;
  kube: KubeClient;
  log: Logger;
  metrics: Metrics;
  now?: () => Date;
  /** FUNCTION=all: what serves POST / in front of /functions/<name> (the dev tools' local broker). */
  front?: express.Router;
}

function functionsFor(options: AppOptions): SwarmFunction[] {
  const { kube, log, metrics } = options;
  const coalescer = createCoalescer(() => metrics.eventsCoalesced.inc());
  const env = (component: 'assign' | 'restart'): ReconcileEnv => ({
    kube,
    now: options.now ?? (() => new Date()),
    component: `swarm-${component}`,
    log: log.child({ function: component }),
    onConflictRetry: () => recordConflictRetry(component, metrics),
    onConfigMapWrite: () => metrics.configMapWrites.inc(),
    onPodRestart: () => metrics.podRestarts.inc(),
  });
  const all = {
    assign: () =>
      // The gauges follow the reconcile's own observation: no read of their own.
      assignFunction(env('assign'), coalescer, (o) => {
        if (o.size) recordAssignmentSize(metrics, o.key, o.size);
        if (o.result === 'gone') forgetAssignment(metrics, o.key);
      }),
    restart: () => restartFunction(env('restart'), coalescer),
  };
  return options.function === 'all' ? [all.assign(), all.restart()] : [all[options.function]()];
}

export function createApp(options: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', (_req, res) => void res.json({ status: 'ready', function: options.function }));
  app.get('/metrics', metricsHandler(options.metrics.registry));
  app.use(introspectionRouter(readSwarmView(options.kube)));
  const functions = functionsFor(options);
  const routeOptions = { log: options.log, metrics: options.metrics };
  if (options.function === 'all') {
    for (const fn of functions) app.use(`/functions/${fn.name}`, eventRoute({ ...routeOptions, functions: [fn] }));
    if (options.front) app.use('/', options.front);
  } else {
    app.use('/', eventRoute({ ...routeOptions, functions }));
  }
  app.use(notFound, jsonErrors);
  return app;
}

const FUNCTION_CHOICES: readonly FunctionChoice[] = ['assign', 'restart', 'all'];

/** FUNCTION is required: an image started without it must say so, not guess. */
export function functionFromEnv(value: string | undefined): FunctionChoice {
  if (value === undefined || value === '') throw new Error(`FUNCTION is required: one of ${FUNCTION_CHOICES.join(', ')}`);
  const choice = FUNCTION_CHOICES.find((c) => c === value);
  if (choice) return choice;
  throw new Error(`FUNCTION must be one of ${FUNCTION_CHOICES.join(', ')} (got ${JSON.stringify(value)})`);
}

export interface Started {
  server: Server;
  port: number;
  close(): Promise<void>;
}

/** Starts a host from the environment: FUNCTION, PORT, KUBECONFIG, LOG_LEVEL, OTEL_*. */
export interface StartExtras extends Partial<AppOptions> {
  /** Extra span processors (npm start's trace printer, tests' in-memory exporter). */
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
  const app = createApp({ function: fn, kube, log, metrics, ...(extra.now ? { now: extra.now } : {}), ...(extra.front ? { front: extra.front } : {}) });
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

// Run directly (node dist/functions/server.js, npm run serve): start and stop on SIGTERM/SIGINT.
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
