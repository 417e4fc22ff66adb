// Spans the trace sink received (OTLP, parsed by trace-sink.ts
// spansFromOtlpJson) as Zipkin v2 JSON spans, for a Zipkin server's
// POST /api/v2/spans: npm start shows each change's trace in Zipkin's UI,
// and Zipkin takes only its own format. Pure.
import type { AttributeValue, CollectedSpan, SpanKindName } from './trace-sink.js';

/** A Zipkin v2 span (zipkin2-api.yaml `Span`), as much of it as OTLP fills. */
export interface ZipkinSpan {
  readonly traceId: string;
  readonly id: string;
  readonly parentId?: string;
  readonly name: string;
  readonly kind?: 'CLIENT' | 'SERVER' | 'PRODUCER' | 'CONSUMER';
  /** Microseconds since the epoch. */
  readonly timestamp: number;
  /** Microseconds; at least 1 (Zipkin drops a zero duration). */
  readonly duration: number;
  readonly localEndpoint: { readonly serviceName: string };
  readonly tags: Readonly<Record<string, string>>;
}

// Zipkin has no INTERNAL kind: a span without one is a local span.
const KINDS: Partial<Record<SpanKindName, ZipkinSpan['kind']>> = {
  client: 'CLIENT',
  server: 'SERVER',
  producer: 'PRODUCER',
  consumer: 'CONSUMER',
};

/** Zipkin tags are strings: arrays as JSON, null as ''. */
function tagValue(value: AttributeValue): string {
  if (value === null) return '';
  if (Array.isArray(value)) return JSON.stringify(value);
  return String(value);
}

/** One span in Zipkin's format; links have no Zipkin field and are left out. */
export function zipkinSpan(span: CollectedSpan): ZipkinSpan {
  const kind = KINDS[span.kind];
  const tags: Record<string, string> = {};
  for (const [key, value] of Object.entries(span.attributes)) tags[key] = tagValue(value);
  if (span.scope) tags['otel.scope.name'] = span.scope;
  // Zipkin's UI marks a span whose tags have `error`.
  if (span.status === 'error') tags.error = 'true';
  const duration = span.endTimeUnixNano > span.startTimeUnixNano ? (span.endTimeUnixNano - span.startTimeUnixNano) / 1000n : 0n;
  return {
    traceId: span.traceId,
    id: span.spanId,
    ...(span.parentSpanId ? { parentId: span.parentSpanId } : {}),
    name: span.name,
    ...(kind ? { kind } : {}),
    timestamp: Number(span.startTimeUnixNano / 1000n),
    duration: Math.max(1, Number(duration)),
    localEndpoint: { serviceName: span.service || 'unknown' },
    tags,
  };
}

export function zipkinSpans(spans: readonly CollectedSpan[]): ZipkinSpan[] {
  return spans.map(zipkinSpan);
}

/** Where Zipkin's UI shows one trace. */
export function zipkinTraceUrl(zipkinBase: string, traceId: string): string {
  return `${zipkinBase.replace(/\/$/, '')}/zipkin/traces/${traceId}`;
}
