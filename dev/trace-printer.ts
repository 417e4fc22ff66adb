// For `npm start`: when a reconcile's trace is complete in this process, print
// it as a compact indented span tree with durations. The formatting is a pure
// function over plain span records; the processor only collects them.
import { SpanStatusCode, type Context } from '@opentelemetry/api';
import { hrTimeToMilliseconds } from '@opentelemetry/core';
import type { ReadableSpan, Span, SpanProcessor } from '@opentelemetry/sdk-trace-node';

/** What the printer needs of a finished span. */
export interface SpanRecord {
  readonly traceId: string;
  readonly spanId: string;
  /** Parent span id; absent for a root. */
  readonly parentSpanId?: string;
  readonly name: string;
  /** Start, in milliseconds since the epoch (orders siblings). */
  readonly startMs: number;
  readonly durationMs: number;
  readonly failed: boolean;
  /** HTTP status of a Kubernetes call, when known. */
  readonly statusCode?: number;
  /** Conflict retries noted on a reconcile span. */
  readonly conflictRetries?: number;
}

export function spanRecordOf(span: ReadableSpan): SpanRecord {
  const { traceId, spanId } = span.spanContext();
  const status = span.attributes['http.response.status_code'];
  const retries = span.attributes['swarm.conflict_retries'];
  return {
    traceId,
    spanId,
    ...(span.parentSpanContext ? { parentSpanId: span.parentSpanContext.spanId } : {}),
    name: span.name,
    startMs: hrTimeToMilliseconds(span.startTime),
    durationMs: hrTimeToMilliseconds(span.duration),
    failed: span.status.code === SpanStatusCode.ERROR,
    ...(typeof status === 'number' ? { statusCode: status } : {}),
    ...(typeof retries === 'number' ? { conflictRetries: retries } : {}),
  };
}

function formatDuration(ms: number): string {
  return ms >= 1000 ? `${(ms / 1000).toFixed(2)}s` : `${ms.toFixed(1)}ms`;
}

function describe(span: SpanRecord): string {
  const notes: string[] = [];
  if (span.statusCode !== undefined) notes.push(String(span.statusCode));
  if (span.conflictRetries) notes.push(`${span.conflictRetries} conflict ${span.conflictRetries === 1 ? 'retry' : 'retries'}`);
  if (span.failed) notes.push('ERROR');
  return `${span.name} ${formatDuration(span.durationMs)}${notes.length ? ` [${notes.join(', ')}]` : ''}`;
}

/**
 * The tree under `rootSpanId`, one span a line, children indented two spaces
 * under their parent in start order, headed by the (shortened) trace id:
 *
 *     trace 4bf92f35 reconcile assign 35.2ms
 *       kube GET swarms 3.1ms [200]
 *       kube PATCH configmaps 4.0ms [409, ERROR]
 */
export function formatSpanTree(spans: readonly SpanRecord[], rootSpanId: string): string {
  const root = spans.find((span) => span.spanId === rootSpanId);
  if (!root) return '';
  const children = new Map<string, SpanRecord[]>();
  for (const span of spans) {
    if (span.parentSpanId === undefined || span.spanId === rootSpanId) continue;
    const siblings = children.get(span.parentSpanId) ?? [];
    siblings.push(span);
    children.set(span.parentSpanId, siblings);
  }
  const lines = [`trace ${root.traceId.slice(0, 8)} ${describe(root)}`];
  const visit = (parentId: string, depth: number): void => {
    const kids = [...(children.get(parentId) ?? [])].sort((a, b) => a.startMs - b.startMs);
    for (const kid of kids) {
      lines.push(`${'  '.repeat(depth)}${describe(kid)}`);
      visit(kid.spanId, depth + 1);
    }
  };
  visit(rootSpanId, 1);
  return `${lines.join('\n')}\n`;
}

/** Ids of `rootSpanId` and all its descendants among `spans`. */
export function subtreeIds(spans: readonly SpanRecord[], rootSpanId: string): Set<string> {
  const ids = new Set([rootSpanId]);
  let grew = true;
  while (grew) {
    grew = false;
    for (const span of spans) {
      if (span.parentSpanId !== undefined && ids.has(span.parentSpanId) && !ids.has(span.spanId)) {
        ids.add(span.spanId);
        grew = true;
      }
    }
  }
  return ids;
}

export interface TracePrinterOptions {
  /** Where trees are written; default process.stdout. */
  readonly out?: { write(text: string): unknown };
  /** Most spans kept while waiting for their local root to end (older traces are dropped). */
  readonly maxBufferedSpans?: number;
}

/**
 * Collects ended spans per trace; when a local root ends (no parent, or a
 * parent in another process) prints its tree and forgets its spans.
 */
export class TracePrinter implements SpanProcessor {
  private readonly out: { write(text: string): unknown };
  private readonly maxBufferedSpans: number;
  private readonly pending = new Map<string, SpanRecord[]>();
  private buffered = 0;

  constructor(options: TracePrinterOptions = {}) {
    this.out = options.out ?? process.stdout;
    this.maxBufferedSpans = options.maxBufferedSpans ?? 10_000;
  }

  onStart(_span: Span, _parentContext: Context): void {}

  onEnd(span: ReadableSpan): void {
    const record = spanRecordOf(span);
    const spans = this.pending.get(record.traceId) ?? [];
    spans.push(record);
    this.pending.set(record.traceId, spans);
    this.buffered += 1;
    const isLocalRoot = !span.parentSpanContext || span.parentSpanContext.isRemote === true;
    if (isLocalRoot) {
      this.out.write(formatSpanTree(spans, record.spanId));
      // Other local roots of the same trace (say, a concurrent restart) keep their spans.
      const printed = subtreeIds(spans, record.spanId);
      const rest = spans.filter((kept) => !printed.has(kept.spanId));
      this.buffered -= spans.length - rest.length;
      if (rest.length) this.pending.set(record.traceId, rest);
      else this.pending.delete(record.traceId);
    }
    this.evictOldest();
  }

  private evictOldest(): void {
    for (const [traceId, spans] of this.pending) {
      if (this.buffered <= this.maxBufferedSpans) return;
      this.pending.delete(traceId);
      this.buffered -= spans.length;
    }
  }

  async forceFlush(): Promise<void> {}

  async shutdown(): Promise<void> {
    this.pending.clear();
    this.buffered = 0;
  }
}
