// Trace context in and out of events: one trace per change. The context the
// event was delivered with (the HTTP `traceparent` header each Knative hop
// sets) is the parent of the reconcile span; the context the event was made in
// (the CloudEvents distributed-tracing extension, which our replies carry) is
// a span link, and the parent when no header came (an event posted by hand,
// Knative without tracing), so the function that receives a reply continues the same
// trace either way.
import { ROOT_CONTEXT, context, isSpanContextValid, trace, type Context, type Link, type TextMapGetter } from '@opentelemetry/api';
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

function fromExtension(cloudEvent?: { readonly [key: string]: unknown }): Context | undefined {
  const traceparent = cloudEvent?.traceparent;
  if (typeof traceparent !== 'string') return undefined;
  const tracestate = cloudEvent?.tracestate;
  return extract(typeof tracestate === 'string' ? { traceparent, tracestate } : { traceparent });
}

export interface IncomingTraceContext {
  /** The reconcile span's parent. */
  readonly parent: Context;
  /** The span the event was made in, when it is not the parent. */
  readonly links: Link[];
}

/**
 * The trace context for handling an incoming event.
 *
 * The parent is the HTTP `traceparent` header: on real Knative (v0.47) it is
 * the only carrier, every hop (broker ingress, channel, trigger filter,
 * activator, queue-proxy) a span in it, so the reconcile hangs under the
 * delivery that brought the event. The event's `traceparent`/`tracestate`
 * extension names the span that made the event (our own `send` span for a
 * reply): a link, as OpenTelemetry's CloudEvents conventions put the creation
 * context, and the parent when no header came. Neither: a new root.
 */
export function incomingTraceContext(headers: IncomingHeaders, cloudEvent?: { readonly [key: string]: unknown }): IncomingTraceContext {
  const delivered = extract(headers);
  const created = fromExtension(cloudEvent);
  if (!delivered) return { parent: created ?? ROOT_CONTEXT, links: [] };
  const createdSpan = created && trace.getSpanContext(created);
  const sameSpan = createdSpan?.spanId === trace.getSpanContext(delivered)?.spanId;
  return { parent: delivered, links: createdSpan && !sameSpan ? [{ context: createdSpan }] : [] };
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
