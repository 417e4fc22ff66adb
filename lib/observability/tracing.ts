// OpenTelemetry tracing for the swarm functions.
//
// One trace per change: the incoming CloudEvent's W3C trace context is the
// parent of the reconcile span; every Kubernetes call is a child span; reply
// events carry the context on (CloudEvents distributed-tracing extension), so
// the function that receives the reply continues the same trace.
//
// All helpers go through the OpenTelemetry API, so they work (as no-ops) in
// code and tests that never call initTracing().
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Attributes,
  type Context,
  type Span,
  type TextMapGetter,
} from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  ConsoleSpanExporter,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { CloudEvent, type CloudEventV1 } from 'cloudevents';
import type { Metrics } from './metrics.js';

/** Instrumentation scope of every span this project makes. */
export const TRACER_NAME = 'swarm';

const tracer = () => trace.getTracer(TRACER_NAME);

// A private propagator: extracting/injecting for events must not depend on
// whether (or how) the global one was registered.
const traceContextPropagator = new W3CTraceContextPropagator();

// ---------------------------------------------------------------------------
// Exporter selection (pure)

export type ExporterKind = 'otlp' | 'console';

export interface ExporterChoice {
  readonly exporters: readonly ExporterKind[];
  /** Settings we could not honour, for a log line at start-up. */
  readonly warnings: readonly string[];
}

/**
 * Which span exporters the standard OTEL_* variables ask for.
 *
 * OTEL_TRACES_EXPORTER (comma-separated: otlp, console, none) wins when set.
 * When unset we export over OTLP only if an OTLP endpoint is configured: the
 * spec's default (otlp to localhost:4318) would make every pod without a
 * collector log export errors forever.
 */
export function exportersFromEnv(env: Readonly<Record<string, string | undefined>>): ExporterChoice {
  const warnings: string[] = [];
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { exporters: [], warnings };
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol === 'grpc') {
    warnings.push('OTLP over gRPC is not supported here; exporting OTLP over HTTP instead (collector port 4318)');
  }
  const requested = env.OTEL_TRACES_EXPORTER?.trim();
  if (requested) {
    const names = requested.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
    if (names.includes('none')) return { exporters: [], warnings };
    const exporters: ExporterKind[] = [];
    for (const name of names) {
      if (name === 'otlp' || name === 'console') {
        if (!exporters.includes(name)) exporters.push(name);
      } else {
        warnings.push(`OTEL_TRACES_EXPORTER=${name} is not supported (use otlp, console or none); ignored`);
      }
    }
    return { exporters, warnings };
  }
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return { exporters: endpoint ? ['otlp'] : [], warnings };
}

// ---------------------------------------------------------------------------
// Provider set-up (shell)

export interface TracingOptions {
  /** service.name of the resource; OTEL_SERVICE_NAME overrides it. */
  readonly serviceName: string;
  /** Extra processors, e.g. an InMemorySpanExporter in tests or the npm-start trace printer. */
  readonly spanProcessors?: readonly SpanProcessor[];
  /** Environment to read OTEL_* from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface Tracing {
  readonly provider: NodeTracerProvider;
  readonly exporters: readonly ExporterKind[];
  readonly warnings: readonly string[];
  /** Export what is buffered; call before answering when the pod may be scaled to zero. */
  forceFlush(): Promise<void>;
  /** Flush, stop exporting and unregister, so initTracing() can run afresh. */
  shutdown(): Promise<void>;
}

let installed: Tracing | undefined;

/**
 * Registers a NodeTracerProvider globally: AsyncLocalStorage context manager,
 * W3C trace-context + baggage propagators, exporters chosen by exportersFromEnv.
 * Idempotent: later calls return the first installation unchanged (call
 * shutdown() first to re-initialise with other options).
 */
export function initTracing(options: TracingOptions): Tracing {
  if (installed) return installed;
  const env = options.env ?? process.env;
  const choice = exportersFromEnv(env);
  const processors: SpanProcessor[] = choice.exporters.map((kind) =>
    kind === 'otlp'
      ? new BatchSpanProcessor(new OTLPTraceExporter())
      : new SimpleSpanProcessor(new ConsoleSpanExporter()),
  );
  processors.push(...(options.spanProcessors ?? []));
  const serviceName = env.OTEL_SERVICE_NAME?.trim() || options.serviceName;
  // Later merges win: OTEL_RESOURCE_ATTRIBUTES may add e.g. k8s.pod.name.
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName }));
  const provider = new NodeTracerProvider({ resource, spanProcessors: processors });
  // contextManager left undefined: the provider installs AsyncLocalStorageContextManager.
  provider.register({
    propagator: new CompositePropagator({
      propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
    }),
  });
  const tracing: Tracing = {
    provider,
    exporters: choice.exporters,
    warnings: choice.warnings,
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
      propagation.disable();
      if (installed === tracing) installed = undefined;
    },
  };
  installed = tracing;
  return tracing;
}

// ---------------------------------------------------------------------------
// Context in and out of events

/** HTTP request headers as Node and express present them (lower-case names). */
export type IncomingHeaders = Readonly<Record<string, string | readonly string[] | undefined>>;

/** The two attributes of the CloudEvents distributed-tracing extension. */
export interface TraceContextFields {
  readonly traceparent: string;
  readonly tracestate?: string;
}

const headerGetter: TextMapGetter<IncomingHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key.toLowerCase()];
    return typeof value === 'string' ? value : value?.[0];
  },
};

function extract(carrier: IncomingHeaders): Context | undefined {
  const extracted = traceContextPropagator.extract(ROOT_CONTEXT, carrier, headerGetter);
  const spanContext = trace.getSpanContext(extracted);
  return spanContext && isSpanContextValid(spanContext) ? extracted : undefined;
}

/**
 * The parent context for handling an incoming event.
 *
 * Prefers the event's `traceparent`/`tracestate` extension attributes: per the
 * CloudEvents distributed-tracing extension they name the span that produced
 * the event (the source, or our own function that sent the reply), which keeps
 * source → assign → reply → restart one parent/child chain however many
 * broker hops lie between. Falls back to the HTTP `traceparent` header that
 * Knative's broker/filter sets, then to a new root.
 */
export function contextFromIncoming(headers: IncomingHeaders, cloudEvent?: { readonly [key: string]: unknown }): Context {
  const traceparent = cloudEvent?.traceparent;
  if (typeof traceparent === 'string') {
    const tracestate = cloudEvent?.tracestate;
    const fromEvent = extract(typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent });
    if (fromEvent) return fromEvent;
  }
  return extract(headers) ?? ROOT_CONTEXT;
}

/** W3C `traceparent`/`tracestate` of the span active in `ctx`; undefined when there is none. */
export function traceparentFor(ctx: Context = context.active()): TraceContextFields | undefined {
  const spanContext = trace.getSpanContext(ctx);
  if (!spanContext || !isSpanContextValid(spanContext)) return undefined;
  const carrier: Record<string, string> = {};
  traceContextPropagator.inject(ctx, carrier, {
    set: (target, key, value) => {
      target[key] = value;
    },
  });
  if (!carrier.traceparent) return undefined;
  return carrier.tracestate ? { traceparent: carrier.traceparent, tracestate: carrier.tracestate } : { traceparent: carrier.traceparent };
}

/**
 * A copy of `event` whose distributed-tracing extension names the active span
 * (or the span of `ctx`), so whoever receives it continues this trace.
 * Returns the event unchanged when no span is active.
 */
export function withTraceContext<T>(event: CloudEvent<T>, ctx: Context = context.active()): CloudEvent<T> {
  const fields = traceparentFor(ctx);
  if (!fields) return event;
  if (fields.tracestate !== undefined || event.tracestate === undefined) {
    return event.cloneWith({ ...fields }, false) as CloudEvent<T>;
  }
  // A tracestate copied from some other trace must not ride along; cloneWith cannot drop it.
  const { tracestate: _stale, ...attributes } = event.toJSON();
  return new CloudEvent<T>({ ...attributes, traceparent: fields.traceparent } as Partial<CloudEventV1<T>>, false);
}

/**
 * Stamps a reply event inside its own short PRODUCER span `send <type>`, so
 * the reply is a visible node of the trace and the receiver's reconcile hangs
 * under it.
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
export function cloudEventAttributes(event: {
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
}

/**
 * Runs `fn` inside a new active span. A throw marks the span ERROR, records
 * the exception and is rethrown; the span always ends.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
  options: SpanOptions = {},
): Promise<T> {
  const parent = options.parent ?? context.active();
  return tracer().startActiveSpan(name, { attributes, kind: options.kind ?? SpanKind.INTERNAL }, parent, async (span) => {
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
export function statusCodeOf(error: unknown): number | undefined {
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
export function kubeCodeLabel(outcome: { ok: boolean; status?: number }): string {
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
 * One reconcile: a CONSUMER span continuing the incoming event's trace, and
 * the swarm_events_total / swarm_reconcile_duration_seconds observations.
 */
export async function traceReconcile<T>(options: ReconcileTrace<T>, fn: (span: Span) => Promise<T>): Promise<T> {
  const started = process.hrtime.bigint();
  const type = typeof options.event.type === 'string' ? options.event.type : 'unknown';
  let outcome = 'error';
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
      { parent: contextFromIncoming(options.headers, options.event), kind: SpanKind.CONSUMER },
    );
    return result;
  } finally {
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    options.metrics?.events.inc({ function: options.functionName, type, outcome });
    options.metrics?.reconcileDuration.observe({ function: options.functionName, outcome }, seconds);
  }
}
