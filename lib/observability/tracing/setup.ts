// Tracing setup: which exporters the OTEL_* variables ask for, and the global
// provider (AsyncLocalStorage context, W3C trace-context + baggage propagators).
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

// ---------------------------------------------------------------------------
// Exporter selection (pure)

export type ExporterKind = 'otlp' | 'console';

export interface ExporterChoice {
  readonly exporters: readonly ExporterKind[];
  /** Settings we could not honour, for a log line at start-up. */
  readonly warnings: readonly string[];
}

/**
 * Which span exporters the standard OTEL_* variables ask for.
 *
 * OTEL_TRACES_EXPORTER (comma-separated: otlp, console, none) wins when set.
 * When unset we export over OTLP only if an OTLP endpoint is configured: the
 * spec's default (otlp to localhost:4318) would make every pod without a
 * collector log export errors forever.
 */
export function exportersFromEnv(env: Readonly<Record<string, string | undefined>>): ExporterChoice {
  const warnings: string[] = [];
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { exporters: [], warnings };
  const protocol = (env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL)?.trim();
  if (protocol === 'grpc') {
    warnings.push('OTLP over gRPC is not supported here; exporting OTLP over HTTP instead (collector port 4318)');
  }
  const requested = env.OTEL_TRACES_EXPORTER?.trim();
  if (requested) {
    const names = requested.split(',').map((name) => name.trim().toLowerCase()).filter(Boolean);
    if (names.includes('none')) return { exporters: [], warnings };
    const exporters: ExporterKind[] = [];
    for (const name of names) {
      if (name === 'otlp' || name === 'console') {
        if (!exporters.includes(name)) exporters.push(name);
      } else {
        warnings.push(`OTEL_TRACES_EXPORTER=${name} is not supported (use otlp, console or none); ignored`);
      }
    }
    return { exporters, warnings };
  }
  const endpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  return { exporters: endpoint ? ['otlp'] : [], warnings };
}

// ---------------------------------------------------------------------------
// Provider set-up (shell)

export interface TracingOptions {
  /** service.name of the resource; OTEL_SERVICE_NAME overrides it. */
  readonly serviceName: string;
  /** Extra processors, e.g. an InMemorySpanExporter in tests or the npm-start trace printer. */
  readonly spanProcessors?: readonly SpanProcessor[];
  /** Environment to read OTEL_* from; default process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

export interface Tracing {
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
