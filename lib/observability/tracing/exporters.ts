// Which span exporters the standard OTEL_* variables ask for: a pure reading
// of the environment, applied by setup.ts.

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
