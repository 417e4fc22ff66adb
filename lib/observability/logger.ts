// Structured logs (pino) that name the trace they belong to: every line logged
// while a span is active carries its trace_id and span_id, so a log line leads
// to its trace and back.
import { isSpanContextValid, trace } from '@opentelemetry/api';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

export interface LoggerOptions {
  /** `name` field of every line (the function: assign, restart, …). */
  readonly name: string;
  /** pino level; default env LOG_LEVEL, else `info`. */
  readonly level?: string;
  /** Where JSON lines go; default stdout. */
  readonly destination?: DestinationStream;
}

/** Ids of the span active now, in the field names log pipelines expect. */
function activeTraceFields(): { trace_id: string; span_id: string; trace_flags: string } | Record<string, never> {
  const spanContext = trace.getActiveSpan()?.spanContext();
  if (!spanContext || !isSpanContextValid(spanContext)) return {};
  return {
    trace_id: spanContext.traceId,
    span_id: spanContext.spanId,
    trace_flags: spanContext.traceFlags.toString(16).padStart(2, '0'),
  };
}

export function createLogger(options: LoggerOptions): Logger {
  const level = options.level ?? process.env.LOG_LEVEL ?? 'info';
  const common = { name: options.name, level, mixin: activeTraceFields };
  return options.destination ? pino(common, options.destination) : pino(common);
}
