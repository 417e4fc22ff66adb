// The tracing pipeline without a node: the otelcol binary that `npm run
// knative:images` builds runs on the host with the very config of
// test/harness/knative-stack/otel-collector.yaml; Knative's hops (services
// broker.ingress and broker.filter, as v0.47 names its spans) and the two
// functions (lib/observability/tracing, OTLP/HTTP from OTEL_* env) export to
// it, and the trace sink must receive one trace with every hop of a scale-up,
// linked as scaleUpHops() says; the sink forwards it to Zipkin (npm start's
// trace viewer), which must serve it back. The binary is built first if it is
// not cached, and Zipkin's jar fetched (the integration tier builds what it runs).
import { SpanKind, context, propagation, trace, type Context } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../controlplane/ports.js';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CloudEvent, HTTP } from 'cloudevents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kubeSpan, traceReconcile, traceReply } from '../../lib/observability/tracing/instrumentation.js';
import { initTracing } from '../../lib/observability/tracing/setup.js';
import { cacheRoot } from '../controlplane/build.js';
import { buildKnativeImages } from '../controlplane/knative-images.js';
import { collectorConfigText, scaleUpHops } from '../harness/knative-tracing.js';
import { formatTrace, startTraceSink, type TraceSink } from '../harness/trace-sink.js';
import { startZipkin, zipkinForwarder, type Zipkin } from '../harness/zipkin-server.js';

const versions = JSON.parse(readFileSync(new URL('../controlplane/versions.json', import.meta.url), 'utf8')) as { otelcol: string };

/** SWARM_OTELCOL, else the binary knative-images.ts left in its cache. */
function otelcolBinary(): string | undefined {
  if (process.env.SWARM_OTELCOL) return process.env.SWARM_OTELCOL;
  const root = cacheRoot();
  if (!existsSync(root)) return undefined;
  return readdirSync(root)
    .filter((name) => name.startsWith(`otelcol-image-${versions.otelcol}-`))
    .map((name) => join(root, name, 'otelcol'))
    .find((path) => existsSync(path));
}


async function until(ready: () => Promise<boolean>, signal: AbortSignal, what: () => string): Promise<void> {
  while (!(await ready().catch(() => false))) {
    if (signal.aborted) throw new Error(`gave up waiting: ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('OTLP through the host otelcol to the trace sink', () => {
  let binary: string;
  let sink: TraceSink;
  let zipkin: Zipkin;
  const forwardErrors: string[] = [];
  let collector: ChildProcess;
  let collectorUrl: string;
  let dir: string;
  let output = '';
  const savedEnv = { ...process.env };

  beforeAll(async () => {
    if (!otelcolBinary()) await buildKnativeImages((line) => process.stderr.write(`${line}\n`), ['otelcol']);
    const built = otelcolBinary();
    if (!built) throw new Error('otelcol was built but its binary is not in the cache');
    binary = built;
    zipkin = await startZipkin({ port: await freePort(), progress: (line) => process.stderr.write(`${line}\n`) });
    sink = await startTraceSink({ onSpans: zipkinForwarder(zipkin.url, (message) => forwardErrors.push(message)) });
    dir = mkdtempSync(join(tmpdir(), 'swarm-otelcol-'));
    writeFileSync(join(dir, 'config.yaml'), collectorConfigText());
    const httpPort = await freePort();
    collectorUrl = `http://127.0.0.1:${httpPort}`;
    collector = spawn(binary, [`--config=${join(dir, 'config.yaml')}`], {
      env: {
        PATH: process.env.PATH ?? '',
        OTLP_HTTP_ENDPOINT: `127.0.0.1:${httpPort}`,
        OTLP_GRPC_ENDPOINT: '127.0.0.1:0',
        TRACE_SINK_ENDPOINT: sink.endpoint,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    collector.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    collector.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
    // Ready when the OTLP/HTTP receiver answers an empty export.
    await until(
      async () => {
        if (collector.exitCode !== null) throw new Error(`otelcol exited ${collector.exitCode}:\n${output}`);
        const res = await fetch(`${collectorUrl}/v1/traces`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
        return res.ok;
      },
      AbortSignal.timeout(30_000),
      () => `otelcol's receiver at ${collectorUrl}:\n${output}`,
    );
  });

  afterAll(async () => {
    process.env = savedEnv;
    if (collector && collector.exitCode === null) {
      const exited = new Promise((resolve) => collector.once('exit', resolve));
      collector.kill('SIGTERM');
      await exited;
    }
    await sink?.close();
    await zipkin?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('one scale-up is one trace: ingress → filter → assign (API calls, reply) → ingress → filter → restart (delete)', async () => {
    // Knative's side, as v0.47 traces it (its own exporters, OTLP/HTTP protobuf).
    const knative = (service: string) =>
      new BasicTracerProvider({
        resource: resourceFromAttributes({ 'service.name': service }),
        spanProcessors: [new SimpleSpanProcessor(new OTLPTraceExporter({ url: `${collectorUrl}/v1/traces` }))],
      });
    const ingress = knative('broker.ingress');
    const filter = knative('broker.filter');
    const headersOf = (ctx: Context) => {
      const carrier: Record<string, string> = {};
      new W3CTraceContextPropagator().inject(ctx, carrier, { set: (c, k, v) => void (c[k] = v) });
      return carrier;
    };
    const child = (provider: BasicTracerProvider, name: string, parent: Context, kind = SpanKind.INTERNAL) => {
      const span = provider.getTracer('knative.dev/eventing').startSpan(name, { kind }, parent);
      return { span, ctx: trace.setSpan(parent, span) };
    };

    const first = child(ingress, 'broker:swarm.swarm-system', context.active());
    const deliverAssign = child(filter, 'trigger:swarm-assign.swarm-system', first.ctx);

    // The functions: OTLP/HTTP to the collector, as the Knative Services' env says.
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT = collectorUrl;
    process.env.OTEL_TRACES_EXPORTER = 'otlp';
    let tracing = initTracing({ serviceName: 'swarm-assign' });
    expect(tracing.exporters).toEqual(['otlp']);
    const statefulSetUpdate = new CloudEvent({
      type: 'dev.knative.apiserver.resource.update',
      source: 'https://10.96.0.1:443',
      subject: '/apis/apps/v1/namespaces/demo/statefulsets/web',
      data: {},
    });
    const reply = await traceReconcile({ functionName: 'assign', headers: headersOf(deliverAssign.ctx), event: statefulSetUpdate }, async () => {
      await kubeSpan('get', 'statefulsets', async () => ({}), { namespace: 'demo', name: 'web', responseStatus: () => 200 });
      await kubeSpan('update', 'configmaps', async () => ({}), { namespace: 'demo', name: 'web-config', responseStatus: () => 200 });
      return traceReply(new CloudEvent({ type: 'info.k8slab.swarm.assignment.changed', source: '/swarm/assign', data: { version: 2 } }));
    });
    await tracing.shutdown();
    deliverAssign.span.end();

    // The reply goes back through the filter to the IMC dispatcher, which sends it to the ingress, then to restart's trigger.
    const dispatcher = knative('inmemorychannel.dispatcher');
    const replyPath = child(dispatcher, 'send http://broker-ingress.knative-eventing.svc.cluster.local/swarm-system/swarm', first.ctx);
    const second = child(ingress, 'broker:swarm.swarm-system', replyPath.ctx);
    const deliverRestart = child(filter, 'trigger:swarm-restart.swarm-system', second.ctx);
    const message = HTTP.binary(reply);
    const delivered = HTTP.toEvent({ headers: message.headers, body: message.body }) as CloudEvent<unknown>;

    tracing = initTracing({ serviceName: 'swarm-restart' });
    await traceReconcile({ functionName: 'restart', headers: headersOf(deliverRestart.ctx), event: delivered }, async () => {
      await kubeSpan('delete', 'pods', async () => undefined, { namespace: 'demo', name: 'web-1', responseStatus: () => 200 });
    });
    await tracing.shutdown();
    for (const hop of [deliverRestart, second, replyPath, first]) hop.span.end();
    await Promise.all([ingress.shutdown(), filter.shutdown(), dispatcher.shutdown()]);
    propagation.disable();

    const { tree, check } = await sink.waitForTrace(scaleUpHops(), AbortSignal.timeout(60_000));
    expect(check.problems).toEqual([]);
    expect(tree.missingParents).toEqual([]);
    expect(tree.roots.map((span) => span.name)).toEqual(['broker:swarm.swarm-system']);
    expect(new Set(tree.spans.map((span) => span.service))).toEqual(new Set(['broker.ingress', 'broker.filter', 'inmemorychannel.dispatcher', 'swarm-assign', 'swarm-restart']));
    expect(check.matched['restart-delete']!.attributes).toMatchObject({ 'kube.verb': 'DELETE', 'http.response.status_code': 200 });
    expect(sink.traces()).toHaveLength(1);
    expect(sink.rejected).toEqual([]);
    expect(formatTrace(tree)).toContain('swarm-restart: kube DELETE pods [client]');

    // Zipkin has every span of it (the forward is asynchronous: polled).
    let served: { id: string; localEndpoint?: { serviceName?: string } }[] = [];
    await until(
      async () => {
        const res = await fetch(`${zipkin.url}/api/v2/trace/${tree.traceId}`);
        served = res.ok ? ((await res.json()) as typeof served) : [];
        return served.length === tree.spans.length;
      },
      AbortSignal.timeout(30_000),
      () => `Zipkin serves ${served.length} of the trace's ${tree.spans.length} spans${forwardErrors.length ? ` (${forwardErrors.join('; ')})` : ''}`,
    );
    expect(new Set(served.map((span) => span.id))).toEqual(new Set(tree.spans.map((span) => span.spanId)));
    expect(served.find((span) => span.id === check.matched['restart-delete']!.spanId)?.localEndpoint?.serviceName).toBe('swarm-restart');
    expect(forwardErrors).toEqual([]);
  });
});
