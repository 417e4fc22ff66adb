import { ROOT_CONTEXT, SpanStatusCode, TraceFlags, trace } from '@opentelemetry/api';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { TracePrinter, formatSpanTree, subtreeIds, type SpanRecord } from '../../dev/trace-printer.js';

const record = (spanId: string, parentSpanId: string | undefined, name: string, startMs: number, durationMs: number, extra: Partial<SpanRecord> = {}): SpanRecord => ({
  traceId: '4bf92f3577b34da6a3ce929d0e0e4736',
  spanId,
  ...(parentSpanId ? { parentSpanId } : {}),
  name,
  startMs,
  durationMs,
  failed: false,
  ...extra,
});

describe('formatSpanTree', () => {
  it('indents children under parents in start order, with durations and notes', () => {
    const spans = [
      record('c2', 'r', 'kube PATCH configmaps', 20, 4, { statusCode: 409, failed: true }),
      record('c1', 'r', 'kube GET swarms', 10, 3.14, { statusCode: 200 }),
      record('g1', 'c3', 'inner', 31, 0.5),
      record('c3', 'r', 'kube PATCH configmaps', 30, 2),
      record('r', 'remote', 'reconcile assign', 0, 1234.5, { conflictRetries: 1 }),
      record('x', undefined, 'unrelated', 0, 1),
    ];
    expect(formatSpanTree(spans, 'r')).toBe(
      [
        'trace 4bf92f35 reconcile assign 1.23s [1 conflict retry]',
        '  kube GET swarms 3.1ms [200]',
        '  kube PATCH configmaps 4.0ms [409, ERROR]',
        '  kube PATCH configmaps 2.0ms',
        '    inner 0.5ms',
        '',
      ].join('\n'),
    );
  });

  it('prints nothing for an unknown root', () => {
    expect(formatSpanTree([record('a', undefined, 'a', 0, 1)], 'zz')).toBe('');
  });

  it('finds a subtree', () => {
    const spans = [record('r', undefined, 'r', 0, 1), record('a', 'r', 'a', 0, 1), record('b', 'a', 'b', 0, 1), record('c', 'other', 'c', 0, 1)];
    expect(subtreeIds(spans, 'r')).toEqual(new Set(['r', 'a', 'b']));
  });
});

describe('TracePrinter', () => {
  function setup(maxBufferedSpans?: number) {
    const output: string[] = [];
    const printer = new TracePrinter({ out: { write: (text: string) => output.push(text) }, ...(maxBufferedSpans ? { maxBufferedSpans } : {}) });
    const tracer = new NodeTracerProvider({ spanProcessors: [printer] }).getTracer('test');
    return { output, tracer };
  }

  it('prints a tree when its local root ends, once', () => {
    const { output, tracer } = setup();
    const remoteParent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: TraceFlags.SAMPLED,
      isRemote: true,
    });
    const root = tracer.startSpan('reconcile restart', {}, remoteParent);
    const child = tracer.startSpan('kube DELETE pods', { attributes: { 'http.response.status_code': 200 } }, trace.setSpan(ROOT_CONTEXT, root));
    child.end();
    expect(output).toEqual([]);
    root.setStatus({ code: SpanStatusCode.ERROR });
    root.end();
    expect(output).toHaveLength(1);
    expect(output[0]).toMatch(/^trace 0af76519 reconcile restart \d+\.\dms \[ERROR\]\n {2}kube DELETE pods \d+\.\dms \[200\]\n$/);
  });

  it('keeps spans of another local root in the same trace', () => {
    const { output, tracer } = setup();
    const first = tracer.startSpan('first');
    const second = tracer.startSpan('second', { root: false }, trace.setSpanContext(ROOT_CONTEXT, { ...first.spanContext(), isRemote: true }));
    const secondChild = tracer.startSpan('second child', {}, trace.setSpan(ROOT_CONTEXT, second));
    secondChild.end();
    first.end();
    second.end();
    expect(output).toHaveLength(2);
    expect(output[1]).toMatch(/second .*\n {2}second child /);
  });

  it('forgets the oldest unfinished traces beyond its buffer', () => {
    const { output, tracer } = setup(2);
    const roots = [tracer.startSpan('r1'), tracer.startSpan('r2')];
    for (const root of roots) tracer.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, root)).end();
    tracer.startSpan('child', {}, trace.setSpan(ROOT_CONTEXT, roots[1]!)).end();
    for (const root of roots) root.end();
    // r1's child was evicted; r2 kept both of its children.
    expect(output[0]).toMatch(/^trace \w+ r1 [^\n]*\n$/);
    expect(output[1]!.split('\n').filter(Boolean)).toHaveLength(3);
  });
});
