import { SpanKind, SpanStatusCode, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-node';
import { CloudEvent, HTTP } from 'cloudevents';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMetrics } from '../../lib/observability/metrics.js';
import {
  kubeSpan,
  recordConflictRetry,
  traceReconcile,
  traceReply,
} from '../../lib/observability/tracing/instrumentation.js';
import { incomingTraceContext, withTraceContext } from '../../lib/observability/tracing/propagation.js';
import { exportersFromEnv } from '../../lib/observability/tracing/exporters.js';
import { initTracing } from '../../lib/observability/tracing/setup.js';

const exporter = new InMemorySpanExporter();
let tracing: ReturnType<typeof initTracing>;

beforeAll(() => {
  tracing = initTracing({ serviceName: 'swarm-test', spanProcessors: [new SimpleSpanProcessor(exporter)], env: {} });
});
afterAll(async () => {
  await tracing.shutdown();
});
beforeEach(() => exporter.reset());

const hex = (length: number) =>
  Array.from({ length }, () => Math.floor(Math.random() * 16).toString(16)).join('');

/** A traceparent as an upstream component (ApiServerSource, broker) would send it. */
function upstreamTraceparent(traceId = hex(32)) {
  const spanId = hex(16);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

const spanNamed = (spans: ReadableSpan[], name: string): ReadableSpan => {
  const span = spans.find((candidate) => candidate.name === name);
  if (!span) throw new Error(`no span ${name} among ${spans.map((s) => s.name).join(', ')}`);
  return span;
};

class Conflict extends Error {
  readonly status = 409;
}

describe('one trace across source event → assign → reply → restart', () => {
  it('links every span to the source event, child to parent', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const source = upstreamTraceparent();
    const apiServerEvent = new CloudEvent({
      type: 'dev.knative.apiserver.resource.update',
      source: 'https://kubernetes.default',
      subject: '/apis/apps/v1/namespaces/demo/statefulsets/web',
      data: {},
    });

    // assign: the broker delivers with the HTTP traceparent header only.
    let patchAttempts = 0;
    const reply = await traceReconcile(
      { functionName: 'assign', headers: { traceparent: source.traceparent }, event: apiServerEvent, metrics },
      async () => {
        await kubeSpan('get', 'swarms', async () => ({ kind: 'Swarm' }), { namespace: 'demo', name: 'web', metrics });
        for (;;) {
          try {
            await kubeSpan(
              'patch',
              'configmaps',
              async () => {
                patchAttempts += 1;
                if (patchAttempts === 1) throw new Conflict('the object has been modified');
                return { kind: 'ConfigMap' };
              },
              // The client reports the response's status beside the result (lib/kube).
              { namespace: 'demo', name: 'web-config', metrics, responseStatus: () => (patchAttempts === 1 ? undefined : 200) },
            );
            break;
          } catch (error) {
            if (!(error instanceof Conflict)) throw error;
            recordConflictRetry('assign', metrics);
          }
        }
        const changed = new CloudEvent({ type: 'info.k8slab.swarm.assignment.changed', source: '/swarm/assign', data: { version: 2 } });
        return traceReply(changed);
      },
    );

    // The reply travels through the broker: HTTP binding out, a broker hop with its own span, binding in.
    const message = HTTP.binary(reply);
    const brokerHop = upstreamTraceparent(source.traceId);
    const delivered = HTTP.toEvent({ headers: message.headers, body: message.body }) as CloudEvent<unknown>;

    await traceReconcile(
      { functionName: 'restart', headers: { traceparent: brokerHop.traceparent }, event: delivered, metrics },
      async () => {
        await kubeSpan('delete', 'pods', async () => undefined, { namespace: 'demo', name: 'web-1', metrics });
      },
    );

    const spans = exporter.getFinishedSpans();
    expect(new Set(spans.map((span) => span.spanContext().traceId))).toEqual(new Set([source.traceId]));

    const assign = spanNamed(spans, 'reconcile assign');
    const send = spanNamed(spans, 'send info.k8slab.swarm.assignment.changed');
    const restart = spanNamed(spans, 'reconcile restart');
    const kubeGet = spanNamed(spans, 'kube GET swarms');
    const patches = spans.filter((span) => span.name === 'kube PATCH configmaps');
    const kubeDelete = spanNamed(spans, 'kube DELETE pods');

    expect(assign.parentSpanContext?.spanId).toBe(source.spanId);
    expect(assign.parentSpanContext?.isRemote).toBe(true);
    expect(assign.kind).toBe(SpanKind.CONSUMER);
    for (const child of [kubeGet, ...patches, send]) expect(child.parentSpanContext?.spanId).toBe(assign.spanContext().spanId);
    // The broker hop that delivered the reply is restart's parent; the reply's extension, its link.
    expect(restart.parentSpanContext?.spanId).toBe(brokerHop.spanId);
    expect(restart.links.map((link) => link.context.spanId)).toEqual([send.spanContext().spanId]);
    expect(kubeDelete.parentSpanContext?.spanId).toBe(restart.spanContext().spanId);

    expect(kubeGet.kind).toBe(SpanKind.CLIENT);
    expect(kubeGet.attributes).toMatchObject({ 'kube.verb': 'GET', 'kube.resource': 'swarms', 'k8s.namespace.name': 'demo', 'kube.name': 'web' });
    expect(patches.map((span) => span.attributes['http.response.status_code'])).toEqual([409, 200]);
    expect(patches.map((span) => span.status.code)).toEqual([SpanStatusCode.ERROR, SpanStatusCode.OK]);
    expect(assign.attributes['swarm.conflict_retries']).toBe(1);
    expect(assign.events.map((event) => event.name)).toEqual(['conflict.retry']);
    expect(assign.attributes['cloudevents.event_type']).toBe('dev.knative.apiserver.resource.update');

    const kubeRequests = await metrics.kubeRequests.get();
    const count = (verb: string, code: string) =>
      kubeRequests.values.find((value) => value.labels.verb === verb && value.labels.code === code)?.value;
    expect(count('PATCH', '409')).toBe(1);
    expect(count('PATCH', '200')).toBe(1);
    expect(count('GET', '2xx')).toBe(1);
    expect(count('DELETE', '2xx')).toBe(1);
    expect((await metrics.conflictsRetried.get()).values).toEqual([{ labels: { function: 'assign' }, value: 1 }]);
    const events = (await metrics.events.get()).values.map((value) => [value.labels.function, value.labels.type, value.labels.outcome, value.value]);
    expect(events).toEqual(
      expect.arrayContaining([
        ['assign', 'dev.knative.apiserver.resource.update', 'ok', 1],
        ['restart', 'info.k8slab.swarm.assignment.changed', 'ok', 1],
      ]),
    );
  });

  it('counts a failed reconcile as error, marks its span and rethrows', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const event = new CloudEvent({ type: 't.failing', source: '/test' });
    await expect(
      traceReconcile({ functionName: 'assign', headers: {}, event, metrics }, async () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    const span = spanNamed(exporter.getFinishedSpans(), 'reconcile assign');
    expect(span.status).toEqual({ code: SpanStatusCode.ERROR, message: 'boom' });
    expect(span.events.map((e) => e.name)).toContain('exception');
    expect((await metrics.events.get()).values).toEqual([{ labels: { function: 'assign', type: 't.failing', outcome: 'error' }, value: 1 }]);
    const histogram = await metrics.reconcileDuration.get();
    const observations = histogram.values.find((v) => v.metricName === 'swarm_reconcile_duration_seconds_count');
    expect(observations).toMatchObject({ labels: { function: 'assign', outcome: 'error' }, value: 1 });
  });

  it('labels the outcome of a result with outcomeOf', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    const event = new CloudEvent({ type: 't.noop', source: '/test' });
    await traceReconcile({ functionName: 'assign', headers: {}, event, metrics, outcomeOf: (r: string) => r }, async () => 'noop');
    expect((await metrics.events.get()).values[0]?.labels.outcome).toBe('noop');
    expect(spanNamed(exporter.getFinishedSpans(), 'reconcile assign').attributes['swarm.outcome']).toBe('noop');
  });
});

describe('incomingTraceContext', () => {
  const spanOf = (ctx: ReturnType<typeof incomingTraceContext>['parent']) => trace.getSpanContext(ctx);

  it("continues the HTTP header (the delivery) and links the CloudEvent extension (the event's maker)", () => {
    const fromEvent = upstreamTraceparent();
    const fromHeader = upstreamTraceparent(fromEvent.traceId);
    const incoming = incomingTraceContext({ traceparent: fromHeader.traceparent }, { traceparent: fromEvent.traceparent, tracestate: 'k=v' });
    expect(spanOf(incoming.parent)?.spanId).toBe(fromHeader.spanId);
    expect(incoming.links).toHaveLength(1);
    expect(incoming.links[0]?.context.spanId).toBe(fromEvent.spanId);
    expect(incoming.links[0]?.context.traceState?.get('k')).toBe('v');
  });

  it('does not link the parent to itself', () => {
    const same = upstreamTraceparent();
    const incoming = incomingTraceContext({ traceparent: same.traceparent }, { traceparent: same.traceparent });
    expect(spanOf(incoming.parent)?.spanId).toBe(same.spanId);
    expect(incoming.links).toEqual([]);
  });

  it('continues the extension when no header came (an event posted directly, Knative without tracing)', () => {
    const fromEvent = upstreamTraceparent();
    for (const headers of [{}, { traceparent: 'not-a-traceparent' }]) {
      const incoming = incomingTraceContext(headers, { traceparent: fromEvent.traceparent, tracestate: 'k=v' });
      expect(spanOf(incoming.parent)?.spanId).toBe(fromEvent.spanId);
      expect(spanOf(incoming.parent)?.traceState?.get('k')).toBe('v');
      expect(incoming.links).toEqual([]);
    }
  });

  it('takes the header alone when the extension is malformed or absent', () => {
    const fromHeader = upstreamTraceparent();
    for (const event of [{ traceparent: 'not-a-traceparent' }, {}, undefined]) {
      const incoming = incomingTraceContext({ traceparent: [fromHeader.traceparent] }, event);
      expect(spanOf(incoming.parent)?.spanId).toBe(fromHeader.spanId);
      expect(incoming.links).toEqual([]);
    }
  });

  it('starts a new trace when neither carries a context', () => {
    expect(incomingTraceContext({}, {})).toEqual({ parent: ROOT_CONTEXT, links: [] });
  });
});

describe('trace context on reply events', () => {
  it('leaves an event alone outside any span', () => {
    const event = new CloudEvent({ type: 't', source: '/s' });
    expect(withTraceContext(event)).toBe(event);
  });

  it('stamps the active span and drops a stale tracestate', () => {
    const stale = new CloudEvent({ type: 't', source: '/s', traceparent: upstreamTraceparent().traceparent, tracestate: 'old=1', data: { a: 1 } });
    trace.getTracer('test').startActiveSpan('producer', (span) => {
      const stamped = withTraceContext(stale);
      const { traceId, spanId } = span.spanContext();
      expect(stamped.traceparent).toBe(`00-${traceId}-${spanId}-01`);
      expect(stamped.tracestate).toBeUndefined();
      expect(stamped.data).toEqual({ a: 1 });
      expect(stamped.id).toBe(stale.id);
      span.end();
    });
  });
});

describe('initTracing', () => {
  it('is idempotent', () => {
    expect(initTracing({ serviceName: 'other', env: {} })).toBe(tracing);
  });
});

describe('exportersFromEnv', () => {
  it.each([
    [{}, []],
    [{ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, ['otlp']],
    [{ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' }, ['otlp']],
    [{ OTEL_TRACES_EXPORTER: 'console' }, ['console']],
    [{ OTEL_TRACES_EXPORTER: 'otlp, console,otlp' }, ['otlp', 'console']],
    [{ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }, []],
    [{ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' }, []],
  ])('%j → %j', (env, expected) => {
    expect(exportersFromEnv(env).exporters).toEqual(expected);
  });

  it('warns about what it cannot honour', () => {
    const choice = exportersFromEnv({ OTEL_TRACES_EXPORTER: 'zipkin,otlp', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' });
    expect(choice.exporters).toEqual(['otlp']);
    expect(choice.warnings).toHaveLength(2);
    expect(choice.warnings.join('\n')).toMatch(/zipkin/);
    expect(choice.warnings.join('\n')).toMatch(/gRPC/);
  });
});

describe('the code a Kubernetes call is counted with (swarm_kube_requests_total)', () => {
  /** The `code` label kubeSpan counts a call with that ends as `fn` does. */
  const codeOf = async (fn: () => Promise<unknown>, responseStatus?: number) => {
    const metrics = createMetrics({ defaultMetrics: false });
    await kubeSpan('get', 'pods', fn, { metrics, ...(responseStatus !== undefined ? { responseStatus: () => responseStatus } : {}) }).catch(() => undefined);
    return (await metrics.kubeRequests.get()).values[0]?.labels.code;
  };

  it.each([
    [{ code: 404, body: '{"kind":"Status","code":404}' }, 404],
    [{ status: 409 }, 409],
    [{ statusCode: 422 }, 422],
    [{ response: { statusCode: 503 } }, 503],
    [{ body: '{"kind":"Status","code":410}' }, 410],
    [{ body: { code: 403 } }, 403],
    [{ code: 'ECONNRESET' }, undefined],
    [{ status: 0 }, undefined],
    [new Error('socket hang up'), undefined],
    ['a string', undefined],
  ])('a failure %j → the status the error carries: %s', async (error, expected) => {
    expect(await codeOf(() => Promise.reject(error))).toBe(expected === undefined ? 'error' : String(expected));
  });

  it('the response status the client reports wins; a success without one is 2xx', async () => {
    expect(await codeOf(() => Promise.reject({ status: 500 }), 409)).toBe('409');
    expect(await codeOf(async () => 'ok', 201)).toBe('201');
    expect(await codeOf(async () => 'ok')).toBe('2xx');
  });
});
