// Instrumentation: spans per reconcile, per Kubernetes call (with the
// response's real HTTP status) and per reply sent, and the metrics counted
// alongside them.
import { SpanKind, SpanStatusCode, context, trace, type Attributes, type Context, type Link, type Span } from '@opentelemetry/api';
import type { CloudEvent } from 'cloudevents';
import type { Metrics } from '../metrics.js';
import { incomingTraceContext, withTraceContext, type IncomingHeaders } from './propagation.js';

/** Instrumentation scope of every span this project makes. */
const TRACER_NAME = 'swarm';

const tracer = () => trace.getTracer(TRACER_NAME);

/**
 * Stamps a reply event inside its own short PRODUCER span `send <type>`, so
 * the reply is a visible node of the trace and the receiver's reconcile links
 * to it (hangs under it when no transport context arrives).
 */
export function traceReply<T>(event: CloudEvent<T>): CloudEvent<T> {
  const span = tracer().startSpan(`send ${event.type}`, {
    kind: SpanKind.PRODUCER,
    attributes: cloudEventAttributes(event),
  });
  try {
    return withTraceContext(event, trace.setSpan(context.active(), span));
  } finally {
    span.end();
  }
}

/** OpenTelemetry semantic-convention attributes of a CloudEvent. */
function cloudEventAttributes(event: {
  readonly id?: unknown;
  readonly type?: unknown;
  readonly source?: unknown;
  readonly subject?: unknown;
}): Attributes {
  const attributes: Attributes = {};
  if (typeof event.id === 'string') attributes['cloudevents.event_id'] = event.id;
  if (typeof event.type === 'string') attributes['cloudevents.event_type'] = event.type;
  if (typeof event.source === 'string') attributes['cloudevents.event_source'] = event.source;
  if (typeof event.subject === 'string') attributes['cloudevents.event_subject'] = event.subject;
  return attributes;
}

// ---------------------------------------------------------------------------
// Spans

export interface SpanOptions {
  /** Parent context; default the active one. */
  readonly parent?: Context;
  readonly kind?: SpanKind;
  readonly links?: Link[];
}

/**
 * Runs `fn` inside a new active span. A throw marks the span ERROR, records
 * the exception and is rethrown; the span always ends.
 */
async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
  options: SpanOptions = {},
): Promise<T> {
  const parent = options.parent ?? context.active();
  const spanOptions = { attributes, kind: options.kind ?? SpanKind.INTERNAL, ...(options.links?.length ? { links: options.links } : {}) };
  return tracer().startActiveSpan(name, spanOptions, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      markFailed(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

function markFailed(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
}

/**
 * The HTTP status code carried by an error from a Kubernetes client:
 * @kubernetes/client-node's ApiException (`code`), other HTTP clients
 * (`statusCode`, `status`, `response.status[Code]`) or a Status body (`body.code`).
 */
function statusCodeOf(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const candidate = error as Record<string, unknown>;
  const response = asRecord(candidate.response);
  const body = typeof candidate.body === 'string' ? parseJsonRecord(candidate.body) : asRecord(candidate.body);
  for (const value of [candidate.code, candidate.statusCode, candidate.status, response?.statusCode, response?.status, body?.code]) {
    if (typeof value === 'number' && Number.isInteger(value) && value >= 100 && value <= 599) return value;
  }
  return undefined;
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : undefined;
}

function parseJsonRecord(text: string): Record<string, unknown> | undefined {
  try {
    return asRecord(JSON.parse(text));
  } catch {
    return undefined;
  }
}

/** Where a Kubernetes call went, for span attributes; and the metrics to count it in. */
export interface KubeCallTarget {
  readonly namespace?: string;
  readonly name?: string;
  readonly metrics?: Pick<Metrics, 'kubeRequests'>;
  /** The HTTP status of the call's response, as the client saw it (lib/kube reports it per call). */
  readonly responseStatus?: () => number | undefined;
}

/**
 * Label value for the `code` of a Kubernetes call: the HTTP status when known,
 * `2xx` for a success whose status was not reported, `error` for a
 * failure without one (network error, timeout).
 */
function kubeCodeLabel(outcome: { ok: boolean; status?: number }): string {
  if (outcome.status !== undefined) return String(outcome.status);
  return outcome.ok ? '2xx' : 'error';
}

/**
 * Wraps one Kubernetes API call in a CLIENT span `kube <VERB> <resource>`
 * (attributes: verb, resource, namespace, name, HTTP status code) and counts
 * it in swarm_kube_requests_total. The status is the response's, as the
 * client reports it (`target.responseStatus`), else one carried by the error.
 */
export async function kubeSpan<T>(verb: string, resource: string, fn: () => Promise<T>, target: KubeCallTarget = {}): Promise<T> {
  const method = verb.toUpperCase();
  const attributes: Attributes = { 'kube.verb': method, 'kube.resource': resource };
  if (target.namespace) attributes['k8s.namespace.name'] = target.namespace;
  if (target.name) attributes['kube.name'] = target.name;
  return tracer().startActiveSpan(`kube ${method} ${resource}`, { kind: SpanKind.CLIENT, attributes }, async (span) => {
    let outcome: { ok: boolean; status?: number } = { ok: false };
    try {
      const result = await fn();
      const status = target.responseStatus?.();
      outcome = status === undefined ? { ok: true } : { ok: true, status };
      span.setStatus({ code: SpanStatusCode.OK });
      return result;
    } catch (error) {
      const status = target.responseStatus?.() ?? statusCodeOf(error);
      outcome = status === undefined ? { ok: false } : { ok: false, status };
      markFailed(span, error);
      throw error;
    } finally {
      if (outcome.status !== undefined) span.setAttribute('http.response.status_code', outcome.status);
      target.metrics?.kubeRequests.inc({ verb: method, resource, code: kubeCodeLabel(outcome) });
      span.end();
    }
  });
}

const conflictRetries = new WeakMap<Span, number>();

/**
 * Notes that a write conflict (409) is being retried: an event and a running
 * `swarm.conflict_retries` count on the active (reconcile) span, and the
 * swarm_conflicts_retried_total counter.
 */
export function recordConflictRetry(functionName: string, metrics?: Pick<Metrics, 'conflictsRetried'>): void {
  const span = trace.getActiveSpan();
  if (span) {
    const retries = (conflictRetries.get(span) ?? 0) + 1;
    conflictRetries.set(span, retries);
    span.addEvent('conflict.retry', { attempt: retries });
    span.setAttribute('swarm.conflict_retries', retries);
  }
  metrics?.conflictsRetried.inc({ function: functionName });
}

export interface ReconcileTrace<T> {
  /** `assign` or `restart`: span name `reconcile <function>` and the `function` label. */
  readonly functionName: string;
  readonly headers: IncomingHeaders;
  /** The incoming CloudEvent (its id, type, source, subject and trace context are read). */
  readonly event: { readonly type?: unknown; readonly [key: string]: unknown };
  readonly metrics?: Pick<Metrics, 'events' | 'reconcileDuration'>;
  /** Outcome label of a result that did not throw (default `ok`); a throw is `error`. */
  readonly outcomeOf?: (result: T) => string;
}

/**
 * One reconcile: a CONSUMER span continuing the incoming event's trace
 * (incomingTraceContext: under the delivery, linked to the event's maker), and
 * the swarm_events_total / swarm_reconcile_duration_seconds observations.
 */
export async function traceReconcile<T>(options: ReconcileTrace<T>, fn: (span: Span) => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const type = typeof options.event.type === 'string' ? options.event.type : 'unknown';
  let outcome = 'error';
  const incoming = incomingTraceContext(options.headers, options.event);
  try {
    const result = await withSpan(
      `reconcile ${options.functionName}`,
      { 'swarm.function': options.functionName, ...cloudEventAttributes(options.event) },
      async (span) => {
        const value = await fn(span);
        outcome = options.outcomeOf?.(value) ?? 'ok';
        span.setAttribute('swarm.outcome', outcome);
        return value;
      },
      { parent: incoming.parent, links: incoming.links, kind: SpanKind.CONSUMER },
    );
    return result;
  } finally {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    options.metrics?.events.inc({ function: options.functionName, type, outcome });
    options.metrics?.reconcileDuration.observe({ function: options.functionName, outcome }, seconds);
  }
}
