// Tracing setup: the global provider (AsyncLocalStorage context, W3C
// trace-context + baggage propagators) with the exporters the OTEL_* variables
// ask for (exporters.ts).
// The helpers in propagation.ts and instrumentation.ts go through the
// OpenTelemetry API, so they work (as no-ops) where initTracing() never ran.
import { context, propagation, trace } from '@opentelemetry/api';
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
import { exportersFromEnv, type ExporterKind } from './exporters.js';

interface TracingOptions {
  /** service.name of the resource; OTEL_SERVICE_NAME overrides it. */
  readonly serviceName: string;
  /** Extra processors, e.g. an InMemorySpanExporter in tests. */
  readonly spanProcessors?: readonly SpanProcessor[];
  /** Environment to read OTEL_* from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

interface Tracing {
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
