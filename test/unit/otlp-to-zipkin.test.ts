// OTLP spans (as the trace sink parses them) → Zipkin v2 JSON (test/harness/otlp-to-zipkin.ts).
import { describe, expect, it } from 'vitest';
import { zipkinSpan, zipkinSpans, zipkinTraceUrl } from '../harness/otlp-to-zipkin.js';
import { spansFromOtlpJson } from '../harness/trace-sink.js';

const TRACE = '5b8efff798038103d269b633813fc60c';
const otlp = {
  resourceSpans: [
    {
      resource: { attributes: [{ key: 'service.name', value: { stringValue: 'swarm-assign' } }] },
      scopeSpans: [
        {
          scope: { name: 'swarm' },
          spans: [
            {
              traceId: TRACE,
              spanId: 'eee19b7ec3c1b174',
              parentSpanId: 'eee19b7ec3c1b173',
              name: 'reconcile assign',
              kind: 5,
              startTimeUnixNano: '1764000000123456789',
              endTimeUnixNano: '1764000000223456789',
              attributes: [
                { key: 'swarm.function', value: { stringValue: 'assign' } },
                { key: 'swarm.conflict_retries', value: { intValue: '2' } },
                { key: 'ok', value: { boolValue: true } },
                { key: 'list', value: { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 1 }] } } },
              ],
              status: { code: 2 },
            },
            { traceId: TRACE, spanId: 'eee19b7ec3c1b175', name: 'kube GET pods', kind: 'SPAN_KIND_CLIENT', startTimeUnixNano: '1764000000200000000', endTimeUnixNano: '1764000000200000000' },
            { traceId: TRACE, spanId: 'eee19b7ec3c1b176', name: 'local', kind: 1, startTimeUnixNano: '1764000000300000000', endTimeUnixNano: '1764000000300500000' },
          ],
        },
      ],
    },
    { scopeSpans: [{ spans: [{ traceId: TRACE, spanId: 'eee19b7ec3c1b177', name: 'send', kind: 4, startTimeUnixNano: '1', endTimeUnixNano: '2' }] }] },
  ],
};

describe('OTLP → Zipkin v2', () => {
  const [reconcile, kube, local, send] = zipkinSpans(spansFromOtlpJson(otlp));

  it('keeps ids, parent, name and service; times in microseconds; attributes as string tags; an error status as the error tag', () => {
    expect(reconcile).toEqual({
      traceId: TRACE,
      id: 'eee19b7ec3c1b174',
      parentId: 'eee19b7ec3c1b173',
      name: 'reconcile assign',
      kind: 'CONSUMER',
      timestamp: 1764000000123456,
      duration: 100000,
      localEndpoint: { serviceName: 'swarm-assign' },
      tags: { 'swarm.function': 'assign', 'swarm.conflict_retries': '2', ok: 'true', list: '["a",1]', 'otel.scope.name': 'swarm', error: 'true' },
    });
  });

  it('maps the kinds Zipkin has and leaves internal spans without one; a root has no parentId', () => {
    expect([reconcile!.kind, kube!.kind, local!.kind, send!.kind]).toEqual(['CONSUMER', 'CLIENT', undefined, 'PRODUCER']);
    expect(local).not.toHaveProperty('kind');
    expect(kube).not.toHaveProperty('parentId');
    expect(zipkinSpan({ ...spansFromOtlpJson(otlp)[0]!, kind: 'server' }).kind).toBe('SERVER');
  });

  it('gives a zero-length span 1 µs (Zipkin drops a zero duration) and a span without service.name the service unknown', () => {
    expect(kube!.duration).toBe(1);
    expect(local!.duration).toBe(500);
    expect(send!.localEndpoint.serviceName).toBe('unknown');
    expect(send!.tags).toEqual({});
  });

  it('links a trace in the UI', () => {
    expect(zipkinTraceUrl('http://localhost:9411/', TRACE)).toBe(`http://localhost:9411/zipkin/traces/${TRACE}`);
  });
});
