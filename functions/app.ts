// The HTTP app of a functions host, as configured: which functions it serves
// (FUNCTION), their reconcile environment, and the routes around them
// (health, /metrics, introspection). functions/server.ts starts it.
import express from 'express';
import type { KubeClient } from '../lib/kube/client.js';
import type { Logger } from '../lib/observability/logger.js';
import { forgetAssignment, metricsHandler, recordAssignmentSize, type Metrics } from '../lib/observability/metrics.js';
import { recordConflictRetry } from '../lib/observability/tracing/instrumentation.js';
import { createCoalescer, shortcutOn, uncoalesced, type Shortcuts } from '../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../lib/reconcilers/env.js';
import { assignFunction } from './assign/index.js';
import type { SwarmFunction } from './function.js';
import { eventRoute, jsonErrors, notFound } from './http.js';
import { introspectionRouter } from './introspection.js';
import { readSwarmView } from './introspection-read.js';
import { restartFunction } from './restart/index.js';

export type FunctionChoice = 'assign' | 'restart' | 'all';

export interface AppOptions {
  function: FunctionChoice;
  kube: KubeClient;
  log: Logger;
  metrics: Metrics;
  now?: () => Date;
  /** Shortcuts switched off (bench:reconcile's hosts); all on when absent. */
  shortcuts?: Partial<Shortcuts>;
}

function functionsFor(options: AppOptions): SwarmFunction[] {
  const { kube, log, metrics, shortcuts } = options;
  const coalescer = shortcutOn(shortcuts, 'coalescer') ? createCoalescer(() => metrics.eventsCoalesced.inc()) : uncoalesced;
  const env = (component: 'assign' | 'restart'): ReconcileEnv => ({
    kube,
    now: options.now ?? (() => new Date()),
    component: `swarm-${component}`,
    log: log.child({ function: component }),
    onConflictRetry: () => recordConflictRetry(component, metrics),
    onConfigMapWrite: () => metrics.configMapWrites.inc(),
    onPodRestart: () => metrics.podRestarts.inc(),
    ...(shortcuts ? { shortcuts } : {}),
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
