// npm start's live view (dev/observed-view.ts): polled
// observations of a scale 2 → 3 on real Knative, the functions waking from
// zero and going back; a line only when something changed.
import { describe, expect, it } from 'vitest';
import { changeTraces, configWrites, versionTraces } from '../../dev/change-traces.js';
import { describeMoves, observedView, sharesTable, statusLine, type Observed, type ObservedMemory } from '../../dev/observed-view.js';
import type { Swarm } from '../../lib/api/types.js';
import { swarmView, type SwarmView } from '../../lib/introspection/view.js';
import type { CollectedSpan } from '../harness/trace-sink.js';

const SWARM = 'swarm/swarm-worker';
const worker = (n: number) => `swarm-worker-${n}`;

const v1: SwarmView = swarmView({
  swarm: { metadata: { namespace: 'swarm', name: 'swarm-worker' } },
  config: { version: 1, workloads: { [worker(0)]: { jobs: ['a', 'b', 'c'], version: 1 }, [worker(1)]: { jobs: ['d', 'e', 'f'], version: 1 } } },
  pendingRestarts: [],
  lastChange: { version: 1, moves: ['a', 'b', 'c', 'd', 'e', 'f'].map((job, i) => ({ job, from: null, to: worker(i < 3 ? 0 : 1) })) },
});
const v2: SwarmView = swarmView({
  swarm: { metadata: { namespace: 'swarm', name: 'swarm-worker' } },
  config: { version: 2, workloads: { [worker(0)]: { jobs: ['a', 'b'], version: 2 }, [worker(1)]: { jobs: ['d', 'e'], version: 2 }, [worker(2)]: { jobs: ['c', 'f'], version: 2 } } },
  pendingRestarts: [],
  lastChange: { version: 2, moves: [{ job: 'c', from: worker(0), to: worker(2) }, { job: 'f', from: worker(1), to: worker(2) }] },
});

const running = (version: number, replicas: number): Swarm['status'] => ({
  phase: 'Running',
  version,
  replicas,
  readyReplicas: replicas,
  uncoveredJobs: 0,
  conditions: [{ type: 'Ready', status: 'True', reason: 'Converged', message: '', lastTransitionTime: '2026-11-22T00:00:00Z' }],
});

function play(observations: Observed[]): string[] {
  let memory: ObservedMemory = {};
  return observations.flatMap((o) => {
    const next = observedView(memory, o);
    memory = next.memory;
    return next.lines;
  });
}

describe('observed live view', () => {
  it('prints the functions waking and sleeping, status changes and each new config version, once each', () => {
    const at = (time: string, assign: number, status: Swarm['status'], view: SwarmView): Observed => ({ time, swarm: SWARM, status, view, functionPods: { 'swarm-assign': assign, 'swarm-restart': 0 } });
    const lines = play([
      at('10:00:00', 1, running(1, 2), v1),
      at('10:00:01', 1, running(1, 2), v1),
      at('10:00:30', 0, running(1, 2), v1),
      at('10:00:40', 1, running(1, 2), v1),
      at('10:00:41', 1, { ...running(2, 3), phase: 'Updating', readyReplicas: 2 }, v2),
      at('10:00:45', 1, running(2, 3), v2),
    ]);
    expect(lines).toEqual([
      '10:00:00 knative swarm-assign 1 pod  swarm-restart 0 pods (scaled to zero)',
      `10:00:00 status  ${SWARM}  Running v1  2/2 ready  0 uncovered  Ready=True (Converged)`,
      `10:00:00 config  ${SWARM}  v1  2 workers  6 new jobs`,
      expect.stringContaining('worker'),
      expect.stringContaining('swarm-worker-0'),
      expect.stringContaining('swarm-worker-1'),
      '10:00:30 knative swarm-assign 0 pods (scaled to zero)  swarm-restart 0 pods (scaled to zero)',
      '10:00:40 knative swarm-assign 1 pod  swarm-restart 0 pods (scaled to zero)',
      `10:00:41 status  ${SWARM}  Updating v2  2/3 ready  0 uncovered  Ready=True (Converged)`,
      `10:00:41 config  ${SWARM}  v2  3 workers  moved 2 jobs (swarm-worker-0 → swarm-worker-2: 1, swarm-worker-1 → swarm-worker-2: 1)`,
      expect.stringContaining('worker'),
      expect.stringContaining('swarm-worker-0'),
      expect.stringContaining('swarm-worker-1'),
      expect.stringContaining('swarm-worker-2'),
      `10:00:45 status  ${SWARM}  Running v2  3/3 ready  0 uncovered  Ready=True (Converged)`,
    ]);
  });

  it('names a Degraded condition with its reason and message; a Swarm without status says so', () => {
    expect(statusLine(undefined)).toBe('no status yet');
    const stuck: Swarm['status'] = { ...running(3, 2), conditions: [{ type: 'Degraded', status: 'True', reason: 'RolloutStuck', message: 'swarm-worker-1: Unschedulable', lastTransitionTime: '2026-11-22T00:00:00Z' }] };
    expect(statusLine(stuck)).toBe('Running v3  2/2 ready  0 uncovered  Degraded: RolloutStuck — swarm-worker-1: Unschedulable');
  });

  it('keeps the last version printed while the config cannot be read', () => {
    const first = observedView({}, { time: '10:00:00', swarm: SWARM, status: running(1, 2), view: v1, functionPods: {} });
    const blind = observedView(first.memory, { time: '10:00:01', swarm: SWARM, status: running(1, 2), functionPods: {} });
    expect(blind.lines).toEqual([]);
    expect(observedView(blind.memory, { time: '10:00:02', swarm: SWARM, status: running(1, 2), view: v1, functionPods: {} }).lines).toEqual([]);
  });
});

describe('trace links', () => {
  const url = (id: string) => `http://localhost:9411/zipkin/traces/${id}`;
  it('prints each version\'s link once, when its trace is in, oldest first', () => {
    const at = (time: string, links: [number, string][]): Observed => ({ time, swarm: SWARM, status: running(2, 3), view: v2, functionPods: {}, traceLinks: new Map(links) });
    const lines = play([at('10:00:00', []), at('10:00:01', [[2, url('b')]]), at('10:00:02', [[2, url('b')]]), at('10:00:03', [[3, url('c')], [2, url('b')], [1, url('a')]])]);
    expect(lines.filter((l) => l.includes(' trace '))).toEqual([
      `10:00:01 trace   ${SWARM}  v2  ${url('b')}`,
      `10:00:03 trace   ${SWARM}  v1  ${url('a')}`,
      `10:00:03 trace   ${SWARM}  v3  ${url('c')}`,
    ]);
  });
});

describe('changeTraces', () => {
  const span = (traceId: string, attributes: Record<string, string>, start = 1n, kind: CollectedSpan['kind'] = 'producer'): CollectedSpan => ({
    traceId,
    spanId: '00000000000000a1',
    name: 'send info.k8slab.swarm.assignment.changed',
    kind,
    service: 'swarm-assign',
    scope: '',
    startTimeUnixNano: start,
    endTimeUnixNano: start,
    attributes,
    resource: {},
    status: 'unset',
  });
  const announce = (traceId: string, version: number, name = 'swarm-worker', start = 1n) =>
    span(traceId, { 'cloudevents.event_type': 'info.k8slab.swarm.assignment.changed', 'cloudevents.event_source': `/apis/k8slab.info/v1alpha1/namespaces/swarm/swarms/${name}`, 'cloudevents.event_id': `uid-1.${version}` }, start);

  it('joins a config version to the trace of the assign that announced it, for this Swarm only; the earliest announcement wins', () => {
    const traces = changeTraces(
      [
        announce('t3-again', 3, 'swarm-worker', 9n),
        announce('t3', 3, 'swarm-worker', 5n),
        announce('t2', 2),
        announce('other', 4, 'other-pool'),
        span('consumer', { 'cloudevents.event_type': 'info.k8slab.swarm.assignment.changed', 'cloudevents.event_source': '/apis/k8slab.info/v1alpha1/namespaces/swarm/swarms/swarm-worker', 'cloudevents.event_id': 'uid-1.5' }, 1n, 'consumer'),
      ],
      'swarm',
      'swarm-worker',
    );
    expect([...traces].sort()).toEqual([
      [2, 't2'],
      [3, 't3'],
    ]);
  });
});

describe('versionTraces', () => {
  const write = (traceId: string, startMs: number, attributes: Record<string, string | number> = {}): CollectedSpan => ({
    traceId,
    spanId: '00000000000000b1',
    name: 'kube PATCH configmaps',
    kind: 'client',
    service: 'swarm-assign',
    scope: '',
    startTimeUnixNano: BigInt(startMs) * 1_000_000n,
    endTimeUnixNano: BigInt(startMs) * 1_000_000n,
    attributes: { 'kube.verb': 'PATCH', 'kube.resource': 'configmaps', 'k8s.namespace.name': 'swarm', 'kube.name': 'swarm-worker-config', 'http.response.status_code': 200, ...attributes },
    resource: {},
    status: 'unset',
  });

  it('keeps successful writes of the Swarm\'s ConfigMap only', () => {
    const writes = configWrites(
      [write('b', 2000), write('a', 1000, { 'kube.verb': 'CREATE', 'http.response.status_code': 201 }), write('conflict', 1500, { 'http.response.status_code': 409 }), write('other', 1600, { 'kube.name': 'other-config' }), write('read', 1700, { 'kube.verb': 'GET' })],
      'swarm',
      'swarm-worker-config',
    );
    expect(writes).toEqual([{ traceId: 'a', startMs: 1000 }, { traceId: 'b', startMs: 2000 }]);
  });

  it('links a version to its announcing trace, else to the last write between the previous sighting and its own', () => {
    const writes = [{ traceId: 'w1', startMs: 900 }, { traceId: 'w2a', startMs: 1500 }, { traceId: 'w2b', startMs: 1800 }, { traceId: 'w4', startMs: 4500 }];
    const traces = versionTraces(
      [{ version: 1, atMs: 1000 }, { version: 2, atMs: 2000 }, { version: 3, atMs: 3000 }, { version: 4, atMs: 4000 }],
      new Map([[3, 'announced3'], [5, 'announced5']]),
      writes,
    );
    // v4: the only write left started after v4 was seen (v5's, say): no link.
    expect([...traces].sort()).toEqual([[1, 'w1'], [2, 'w2b'], [3, 'announced3'], [5, 'announced5']]);
  });
});

describe('the view\'s text', () => {
  it('summarises moves by pair, new and removed jobs', () => {
    expect(describeMoves([])).toBe('no job moved');
    expect(
      describeMoves([
        { job: 'a', from: 'w-0', to: 'w-2' },
        { job: 'b', from: 'w-0', to: 'w-2' },
        { job: 'c', from: 'w-1', to: 'w-2' },
        { job: 'n', from: null, to: 'w-1' },
        { job: 'r', from: 'w-0', to: null },
      ]),
    ).toBe('moved 3 jobs (w-0 → w-2: 2, w-1 → w-2: 1)  1 new job  1 job removed');
  });

  it('cuts a long share at a job boundary', () => {
    const jobs = Array.from({ length: 30 }, (_, i) => `stream-${String(i).padStart(2, '0')}`);
    const [, row] = sharesTable(
      swarmView({ swarm: { metadata: { namespace: 'swarm', name: 'swarm-worker' } }, config: { version: 1, workloads: { [worker(0)]: { jobs, version: 1 } } }, pendingRestarts: [], lastChange: { version: 1, moves: [] } }),
    );
    expect(row).toBe('         swarm-worker-0  v1     30  stream-00 stream-01 stream-02 stream-03 stream-04 …');
  });
});
