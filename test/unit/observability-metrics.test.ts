import type { AddressInfo } from 'node:net';
import express from 'express';
import { describe, expect, it } from 'vitest';
import { createMetrics, forgetAssignment, metricsHandler, recordAssignmentSize } from '../../lib/observability/metrics.js';

/** The value of one series in the Prometheus text format, e.g. `swarm_pod_restarts_total`. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('createMetrics', () => {
  it('exposes every swarm metric with its labels', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.events.inc({ function: 'assign', type: 'dev.knative.apiserver.resource.update', outcome: 'applied' });
    metrics.reconcileDuration.observe({ function: 'assign', outcome: 'applied' }, 0.03);
    metrics.kubeRequests.inc({ verb: 'PATCH', resource: 'configmaps', code: '409' });
    metrics.conflictsRetried.inc({ function: 'assign' });
    metrics.configMapWrites.inc();
    metrics.configMapWrites.inc();
    metrics.podRestarts.inc(3);
    metrics.eventsCoalesced.inc();
    recordAssignmentSize(metrics, { namespace: 'demo', name: 'web' }, { workers: 3, jobs: 3 });

    const text = await metrics.registry.metrics();
    expect(sample(text, 'swarm_events_total{function="assign",type="dev.knative.apiserver.resource.update",outcome="applied"}')).toBe(1);
    expect(sample(text, 'swarm_reconcile_duration_seconds_count{function="assign",outcome="applied"}')).toBe(1);
    expect(sample(text, 'swarm_reconcile_duration_seconds_bucket{le="0.05",function="assign",outcome="applied"}')).toBe(1);
    expect(sample(text, 'swarm_reconcile_duration_seconds_bucket{le="0.025",function="assign",outcome="applied"}')).toBe(0);
    expect(sample(text, 'swarm_kube_requests_total{verb="PATCH",resource="configmaps",code="409"}')).toBe(1);
    expect(sample(text, 'swarm_conflicts_retried_total{function="assign"}')).toBe(1);
    expect(sample(text, 'swarm_configmap_writes_total')).toBe(2);
    expect(sample(text, 'swarm_pod_restarts_total')).toBe(3);
    expect(sample(text, 'swarm_events_coalesced_total')).toBe(1);
    expect(sample(text, 'swarm_assignment_jobs{namespace="demo",swarm="web"}')).toBe(3);
    expect(sample(text, 'swarm_assignment_workers{namespace="demo",swarm="web"}')).toBe(3);

    forgetAssignment(metrics, { namespace: 'demo', name: 'web' });
    const after = await metrics.registry.metrics();
    expect(sample(after, 'swarm_assignment_jobs{namespace="demo",swarm="web"}')).toBeUndefined();
  });

  it('gives each call its own registry', async () => {
    const first = createMetrics({ defaultMetrics: false });
    const second = createMetrics({ defaultMetrics: false });
    first.podRestarts.inc();
    expect(sample(await first.registry.metrics(), 'swarm_pod_restarts_total')).toBe(1);
    expect(sample(await second.registry.metrics(), 'swarm_pod_restarts_total')).toBe(0);
  });

  it('adds process metrics unless told not to', async () => {
    expect(await createMetrics().registry.metrics()).toMatch(/^process_cpu_user_seconds_total /m);
    expect(await createMetrics({ defaultMetrics: false }).registry.metrics()).not.toMatch(/process_cpu/);
  });

  it('stamps default labels on every series', async () => {
    const metrics = createMetrics({ defaultMetrics: false, defaultLabels: { service: 'restart' } });
    metrics.podRestarts.inc();
    expect(sample(await metrics.registry.metrics(), 'swarm_pod_restarts_total{service="restart"}')).toBe(1);
  });
});

describe('metricsHandler', () => {
  it('serves the registry in the Prometheus text format', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.configMapWrites.inc();
    const app = express();
    app.get('/metrics', metricsHandler(metrics.registry));
    const server = app.listen(0, '127.0.0.1');
    await new Promise<void>((resolve) => server.once('listening', () => resolve()));
    try {
      const { port } = server.address() as AddressInfo;
      const response = await fetch(`http://127.0.0.1:${port}/metrics`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect(sample(await response.text(), 'swarm_configmap_writes_total')).toBe(1);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
