import { Writable } from 'node:stream';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../lib/observability/logger.js';
import { trace } from '@opentelemetry/api';
import { initTracing } from '../../lib/observability/tracing/setup.js';

let tracing: ReturnType<typeof initTracing>;
beforeAll(() => {
  tracing = initTracing({ serviceName: 'logger-test', env: {} });
});
afterAll(async () => {
  await tracing.shutdown();
});

/** A pino destination that keeps every line, parsed. */
function capture() {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { lines, stream };
}

describe('createLogger', () => {
  const savedLevel = process.env.LOG_LEVEL;
  afterEach(() => {
    if (savedLevel === undefined) delete process.env.LOG_LEVEL;
    else process.env.LOG_LEVEL = savedLevel;
  });

  it('adds trace_id and span_id of the active span', async () => {
    const { lines, stream } = capture();
    const logger = createLogger({ name: 'assign', level: 'info', destination: stream });
    let ids: { traceId: string; spanId: string } | undefined;
    trace.getTracer('test').startActiveSpan('reconcile', (span) => {
      ids = span.spanContext();
      logger.info({ swarm: 'demo/web' }, 'assignment written');
      span.end();
    });
    logger.info('outside any span');
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatchObject({ name: 'assign', msg: 'assignment written', swarm: 'demo/web', trace_id: ids?.traceId, span_id: ids?.spanId, trace_flags: '01' });
    expect(lines[1]).not.toHaveProperty('trace_id');
    expect(lines[1]).not.toHaveProperty('span_id');
  });

  it('takes its level from LOG_LEVEL unless given one', () => {
    process.env.LOG_LEVEL = 'warn';
    const { lines, stream } = capture();
    const logger = createLogger({ name: 'restart', destination: stream });
    expect(logger.level).toBe('warn');
    logger.info('dropped');
    logger.warn('kept');
    expect(lines.map((line) => line.msg)).toEqual(['kept']);
    expect(createLogger({ name: 'restart', level: 'debug', destination: stream }).level).toBe('debug');
  });

  it('defaults to info', () => {
    delete process.env.LOG_LEVEL;
    expect(createLogger({ name: 'assign', destination: capture().stream }).level).toBe('info');
  });
});
