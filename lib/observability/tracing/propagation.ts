// Trace context in and out of events: one trace per change. The incoming
// CloudEvent's W3C trace context is the parent of the reconcile span, and reply
// events carry the context on (CloudEvents distributed-tracing extension), so
// the function that receives the reply continues the same trace.
import { ROOT_CONTEXT, context, isSpanContextValid, trace, type Context, type TextMapGetter } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { CloudEvent, type CloudEventV1 } from 'cloudevents';

// A private propagator: extracting/injecting for events must not depend on
// whether (or how) the global one was registered.
const traceContextPropagator = new W3CTraceContextPropagator();

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
function traceparentFor(ctx: Context = context.active()): TraceContextFields | undefined {
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
