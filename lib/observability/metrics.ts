// Prometheus metrics for the swarm functions. Each call to createMetrics() owns
// its own Registry (never prom-client's global one) so that tests, and several
// functions served from one process, never see each other's counts.
import type { Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Which function handled an event: label value of `function`. */
export type FunctionName = 'assign' | 'restart' | (string & {});

export interface Metrics {
  readonly registry: Registry;
  /** Incoming events by CloudEvent type and how handling ended (e.g. applied, noop, conflict, error). */
  readonly events: Counter<'function' | 'type' | 'outcome'>;
  /** Wall time of one reconcile, from event receipt to reply. */
  readonly reconcileDuration: Histogram<'function' | 'outcome'>;
  /** Kubernetes API calls by verb (GET, LIST, PATCH, …), resource and HTTP status code. */
  readonly kubeRequests: Counter<'verb' | 'resource' | 'code'>;
  /** 409 Conflicts that were retried with fresh state. */
  readonly conflictsRetried: Counter<'function'>;
  /** Successful writes of the worker ConfigMap. */
  readonly configMapWrites: Counter;
  /** Pods deleted so that the StatefulSet restarts them with their new share. */
  readonly podRestarts: Counter;
  /** Events folded into a reconcile already in flight or already up to date. */
  readonly eventsCoalesced: Counter;
  /** Jobs in the assignment currently in force, per Swarm. */
  readonly assignmentJobs: Gauge<'namespace' | 'swarm'>;
  /** Workers in the assignment currently in force, per Swarm. */
  readonly assignmentWorkers: Gauge<'namespace' | 'swarm'>;
}

export interface CreateMetricsOptions {
  /** Also collect Node.js process metrics (CPU, memory, event loop lag). Default true. */
  readonly defaultMetrics?: boolean;
  /** Constant labels on every series, e.g. `{ service: 'assign' }`. */
  readonly defaultLabels?: Record<string, string>;
}

// Reconciles are a handful of API round-trips: milliseconds to a few seconds.
const RECONCILE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function createMetrics(options: CreateMetricsOptions = {}): Metrics {
  const registry = new Registry();
  if (options.defaultLabels) registry.setDefaultLabels(options.defaultLabels);
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    events: new Counter({
      name: 'swarm_events_total',
      help: 'CloudEvents received, by handling function, event type and outcome.',
      labelNames: ['function', 'type', 'outcome'] as const,
      registers,
    }),
    reconcileDuration: new Histogram({
      name: 'swarm_reconcile_duration_seconds',
      help: 'Duration of one reconcile, by function and outcome.',
      labelNames: ['function', 'outcome'] as const,
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    kubeRequests: new Counter({
      name: 'swarm_kube_requests_total',
      help: 'Kubernetes API requests, by verb, resource and HTTP status code.',
      labelNames: ['verb', 'resource', 'code'] as const,
      registers,
    }),
    conflictsRetried: new Counter({
      name: 'swarm_conflicts_retried_total',
      help: 'Write conflicts (HTTP 409) retried with fresh state, by function.',
      labelNames: ['function'] as const,
      registers,
    }),
    configMapWrites: new Counter({
      name: 'swarm_configmap_writes_total',
      help: 'Successful writes of worker ConfigMaps.',
      registers,
    }),
    podRestarts: new Counter({
      name: 'swarm_pod_restarts_total',
      help: 'Worker pods deleted so that they restart with their new share.',
      registers,
    }),
    eventsCoalesced: new Counter({
      name: 'swarm_events_coalesced_total',
      help: 'Events that needed no reconcile of their own (folded into another, or already up to date).',
      registers,
    }),
    assignmentJobs: new Gauge({
      name: 'swarm_assignment_jobs',
      help: 'Jobs in the assignment in force, per Swarm.',
      labelNames: ['namespace', 'swarm'] as const,
      registers,
    }),
    assignmentWorkers: new Gauge({
      name: 'swarm_assignment_workers',
      help: 'Workers in the assignment in force, per Swarm.',
      labelNames: ['namespace', 'swarm'] as const,
      registers,
    }),
  };
}

/** Sets both assignment gauges from the size of the assignment in force. */
export function recordAssignmentSize(metrics: Metrics, swarm: { namespace: string; name: string }, size: { workers: number; jobs: number }): void {
  const labels = { namespace: swarm.namespace, swarm: swarm.name };
  metrics.assignmentWorkers.set(labels, size.workers);
  metrics.assignmentJobs.set(labels, size.jobs);
}

/** Drops the gauges of a Swarm that no longer exists, so it stops being reported. */
export function forgetAssignment(metrics: Metrics, swarm: { namespace: string; name: string }): void {
  const labels = { namespace: swarm.namespace, swarm: swarm.name };
  metrics.assignmentWorkers.remove(labels);
  metrics.assignmentJobs.remove(labels);
}

/** Express handler serving the registry in the Prometheus text format. */
export function metricsHandler(registry: Registry) {
  return async (_req: Request, res: Response): Promise<void> => {
    const body = await registry.metrics();
    res.set('Content-Type', registry.contentType).send(body);
  };
}
