import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { scaleUpHops } from '../harness/knative-tracing.js';
import {
  ancestorsOf,
  buildTraces,
  checkHops,
  findTrace,
  formatTrace,
  spansFromOtlpJson,
  startTraceSink,
  type Hop,
  type TraceSink,
} from '../harness/trace-sink.js';

// OTLP JSON as the collector's otlphttp exporter writes it (encoding: json):
// hex ids, int64 as decimal strings, enums as numbers.
interface SpanSpec {
  id: string;
  parent?: string;
  name: string;
  service: string;
  kind?: number;
  start?: number;
  attributes?: Record<string, string | number | boolean>;
  /** Ids of spans (same trace) named in span links. */
  links?: string[];
}

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const spanId = (id: string) => createHashLike(id);
/** A stable 16-hex-digit span id per name. */
function createHashLike(id: string): string {
  let h = 0n;
  for (const ch of id) h = (h * 131n + BigInt(ch.charCodeAt(0))) % 2n ** 63n;
  return (h + 1n).toString(16).padStart(16, '0');
}

function otlp(specs: readonly SpanSpec[], traceId = TRACE) {
  const services = [...new Set(specs.map((s) => s.service))];
  return {
    resourceSpans: services.map((service) => ({
      resource: { attributes: [{ key: 'service.name', value: { stringValue: service } }] },
      scopeSpans: [
        {
          scope: { name: 'test' },
          spans: specs
            .filter((s) => s.service === service)
            .map((s, i) => ({
              traceId,
              spanId: spanId(s.id),
              parentSpanId: s.parent ? spanId(s.parent) : '',
              name: s.name,
              kind: s.kind ?? 1,
              startTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt(s.start ?? i) * 1000n),
              endTimeUnixNano: String(1_700_000_000_000_000_000n + BigInt((s.start ?? i) + 1) * 1000n),
              attributes: Object.entries(s.attributes ?? {}).map(([key, v]) => ({
                key,
                value: typeof v === 'string' ? { stringValue: v } : typeof v === 'boolean' ? { boolValue: v } : { intValue: String(v) },
              })),
              status: {},
              links: (s.links ?? []).map((l) => ({ traceId, spanId: spanId(l) })),
            })),
        },
      ],
    })),
  };
}

/** One scale-up as Knative v0.47 and the functions trace it (intermediate HTTP spans included). */
const scaleUp: SpanSpec[] = [
  { id: 'src', name: 'cloudevents.client.dev.knative.apiserver.resource.update send', service: 'apiserversource', kind: 4, start: 0 },
  { id: 'src-http', parent: 'src', name: 'POST /swarm-system/swarm', service: 'apiserversource', kind: 3, start: 1 },
  { id: 'in-http', parent: 'src-http', name: 'POST /swarm-system/swarm', service: 'broker.ingress', kind: 2, start: 2 },
  { id: 'in', parent: 'in-http', name: 'broker:swarm.swarm-system', service: 'broker.ingress', start: 3 },
  { id: 'in-out', parent: 'in', name: 'POST /swarm-system/swarm-kne-trigger', service: 'broker.ingress', kind: 3, start: 4 },
  { id: 'imc', parent: 'in-out', name: 'kncloudevents.receive', service: 'inmemorychannel.dispatcher', kind: 2, start: 5 },
  { id: 'imc-out', parent: 'imc', name: 'POST /triggers/swarm-system/swarm-assign/uid', service: 'inmemorychannel.dispatcher', kind: 3, start: 6 },
  { id: 'f-http', parent: 'imc-out', name: 'POST /triggers/swarm-system/swarm-assign/uid', service: 'broker.filter', kind: 2, start: 7 },
  { id: 'f', parent: 'f-http', name: 'trigger:swarm-assign.swarm-system', service: 'broker.filter', start: 8 },
  { id: 'f-out', parent: 'f', name: 'POST /', service: 'broker.filter', kind: 3, start: 9 },
  { id: 'qp', parent: 'f-out', name: 'queue', service: 'swarm-assign-00001', kind: 2, start: 10 },
  { id: 'assign', parent: 'qp', name: 'reconcile assign', service: 'swarm-assign', kind: 5, start: 11 },
  { id: 'a-get', parent: 'assign', name: 'kube GET statefulsets', service: 'swarm-assign', kind: 3, start: 12 },
  { id: 'a-put', parent: 'assign', name: 'kube UPDATE configmaps', service: 'swarm-assign', kind: 3, start: 13 },
  { id: 'reply', parent: 'assign', name: 'send info.k8slab.swarm.assignment.changed', service: 'swarm-assign', kind: 4, start: 14 },
  // The dispatcher sends the reply (the filter's HTTP response) to the broker ingress itself.
  { id: 'imc-reply', parent: 'imc', name: 'send http://broker-ingress.knative-eventing.svc.cluster.local/swarm-system/swarm', service: 'inmemorychannel.dispatcher', start: 15 },
  { id: 'imc-reply-out', parent: 'imc-reply', name: 'POST /swarm-system/swarm', service: 'inmemorychannel.dispatcher', kind: 3, start: 16 },
  { id: 'in2-http', parent: 'imc-reply-out', name: 'POST /swarm-system/swarm', service: 'broker.ingress', kind: 2, start: 18 },
  { id: 'in2', parent: 'in2-http', name: 'broker:swarm.swarm-system', service: 'broker.ingress', start: 19 },
  { id: 'in2-out', parent: 'in2', name: 'POST /swarm-system/swarm-kne-trigger', service: 'broker.ingress', kind: 3, start: 20 },
  { id: 'imc2', parent: 'in2-out', name: 'kncloudevents.receive', service: 'inmemorychannel.dispatcher', kind: 2, start: 21 },
  { id: 'imc2-out', parent: 'imc2', name: 'POST /triggers/swarm-system/swarm-restart/uid', service: 'inmemorychannel.dispatcher', kind: 3, start: 22 },
  { id: 'f2-http', parent: 'imc2-out', name: 'POST /triggers/swarm-system/swarm-restart/uid', service: 'broker.filter', kind: 2, start: 23 },
  { id: 'f2', parent: 'f2-http', name: 'trigger:swarm-restart.swarm-system', service: 'broker.filter', start: 24 },
  { id: 'f2-out', parent: 'f2', name: 'POST /', service: 'broker.filter', kind: 3, start: 25 },
  { id: 'qp2', parent: 'f2-out', name: 'queue', service: 'swarm-restart-00001', kind: 2, start: 26 },
  // The delivery is the parent; the event's traceparent extension, naming assign's reply span, a link.
  { id: 'restart', parent: 'qp2', name: 'reconcile restart', service: 'swarm-restart', kind: 5, start: 27, links: ['reply'] },
  { id: 'r-del', parent: 'restart', name: 'kube DELETE pods', service: 'swarm-restart', kind: 3, start: 28 },
];

const tree = (specs: readonly SpanSpec[]) => {
  const trees = buildTraces(spansFromOtlpJson(otlp(specs)));
  expect(trees).toHaveLength(1);
  return trees[0]!;
};

describe('spansFromOtlpJson', () => {
  it('reads ids, parent, kind, service, scope, times and attributes', () => {
    const spans = spansFromOtlpJson(otlp([{ id: 'a', name: 'root', service: 'svc', kind: 2, attributes: { s: 'x', n: 3, b: true } }, { id: 'b', parent: 'a', name: 'child', service: 'svc' }]));
    expect(spans).toHaveLength(2);
    const [root, child] = spans;
    expect(root).toMatchObject({ traceId: TRACE, spanId: spanId('a'), name: 'root', kind: 'server', service: 'svc', scope: 'test', attributes: { s: 'x', n: 3, b: true } });
    expect(root!.parentSpanId).toBeUndefined();
    expect(child!.parentSpanId).toBe(spanId('a'));
    expect(typeof root!.startTimeUnixNano).toBe('bigint');
  });

  it('accepts enum names and upper-case hex, and rejects malformed ids', () => {
    const body = otlp([{ id: 'a', name: 'x', service: 's' }]);
    const span = body.resourceSpans[0]!.scopeSpans[0]!.spans[0]! as Record<string, unknown>;
    span.kind = 'SPAN_KIND_CONSUMER';
    span.spanId = (span.spanId as string).toUpperCase();
    span.status = { code: 'STATUS_CODE_ERROR' };
    expect(spansFromOtlpJson(body)[0]).toMatchObject({ kind: 'consumer', spanId: spanId('a'), status: 'error' });
    span.traceId = 'S/k=';
    expect(() => spansFromOtlpJson(body)).toThrow(/traceId/);
  });

  it('takes an empty request', () => {
    expect(spansFromOtlpJson({})).toEqual([]);
    expect(() => spansFromOtlpJson([])).toThrow(/request/);
  });
});

describe('buildTraces', () => {
  it('groups by trace id, orders by start, links children and keeps one copy of a re-sent span', () => {
    const a = spansFromOtlpJson(otlp([{ id: 'r', name: 'root', service: 's', start: 5 }, { id: 'c', parent: 'r', name: 'c', service: 's', start: 6 }]));
    const b = spansFromOtlpJson(otlp([{ id: 'x', name: 'other', service: 's', start: 1 }], 'ffffffffffffffffffffffffffffffff'));
    const trees = buildTraces([...a, ...b, ...a]);
    expect(trees.map((t) => t.traceId)).toEqual(['ffffffffffffffffffffffffffffffff', TRACE]);
    const t = trees[1]!;
    expect(t.spans.map((s) => s.name)).toEqual(['root', 'c']);
    expect(t.roots.map((s) => s.name)).toEqual(['root']);
    expect(t.children.get(spanId('r'))!.map((s) => s.name)).toEqual(['c']);
    expect(ancestorsOf(t, t.spans[1]!).map((s) => s.name)).toEqual(['root']);
  });

  it('treats a span whose parent has not arrived as a root and names the missing parent', () => {
    const t = tree([{ id: 'c', parent: 'gone', name: 'orphan', service: 's' }]);
    expect(t.roots.map((s) => s.name)).toEqual(['orphan']);
    expect(t.missingParents).toEqual([spanId('gone')]);
    expect(formatTrace(t)).toContain('not received');
  });
});

describe('checkHops', () => {
  it('finds every hop of a scale-up with its parent links', () => {
    const t = tree(scaleUp);
    const check = checkHops(t, scaleUpHops());
    expect(check.problems).toEqual([]);
    expect(check.ok).toBe(true);
    const id = (hop: string) => check.matched[hop]!.spanId;
    expect(id('ingress')).toBe(spanId('in'));
    expect(id('reply-ingress')).toBe(spanId('in2'));
    expect(id('deliver-restart')).toBe(spanId('f2'));
    expect(id('restart')).toBe(spanId('restart'));
    expect(check.matched['assign-api']!.name).toBe('kube GET statefulsets');
    expect(formatTrace(t).split('\n')).toHaveLength(scaleUp.length + 1);
  });

  it('says which hop is missing and does not search what hangs under it', () => {
    const check = checkHops(tree(scaleUp.filter((s) => s.id !== 'f' && s.id !== 'qp' && s.id !== 'f-out')), scaleUpHops());
    expect(check.ok).toBe(false);
    expect(check.problems[0]).toMatch(/^deliver-assign: no span with service broker.filter, name trigger:swarm-assign.swarm-system/);
    expect(check.problems[1]).toMatch(/^assign: not checked/);
  });

  it('reports a wrong parent link with the parent actually found', () => {
    // restart continuing the reply's extension (a child of send) instead of the delivery's header.
    const wrong = scaleUp.map((s) => (s.id === 'restart' ? { ...s, parent: 'reply', links: [] } : s));
    const check = checkHops(tree(wrong), scaleUpHops());
    expect(check.problems).toEqual([
      expect.stringMatching(/^restart: no span with service swarm-restart, name reconcile restart links to reply/),
      'restart-delete: not checked, its parent hop restart was not found',
    ]);
    const linkedButMisplaced = scaleUp.map((s) => (s.id === 'restart' ? { ...s, parent: 'reply' } : s));
    expect(checkHops(tree(linkedButMisplaced), scaleUpHops()).problems[0]).toMatch(
      /^restart: 1 span\(s\) with service swarm-restart, name reconcile restart, none a descendant of deliver-restart .* has parent swarm-assign: send info.k8slab.swarm.assignment.changed$/,
    );
  });

  it('reads span links and shows them in the printed trace', () => {
    const t = tree(scaleUp);
    expect(t.byId.get(spanId('restart'))!.links).toEqual([{ traceId: TRACE, spanId: spanId('reply') }]);
    expect(t.byId.get(spanId('assign'))!.links).toBeUndefined();
    expect(formatTrace(t)).toContain('swarm-restart: reconcile restart [consumer] → link swarm-assign: send info.k8slab.swarm.assignment.changed');
  });

  it('reports a broken chain (a new root) as not linked', () => {
    const broken = scaleUp.map((s) => (s.id === 'assign' ? { id: 'assign', name: s.name, service: s.service, kind: s.kind, start: s.start } : s));
    const check = checkHops(tree(broken), scaleUpHops());
    expect(check.problems[0]).toMatch(/^assign: .* none a descendant of deliver-assign .* is a root$/);
  });

  it('matches each span to one hop only, and by attributes', () => {
    const t = tree([
      { id: 'a', name: 'x', service: 's', start: 0, attributes: { step: 1 } },
      { id: 'b', parent: 'a', name: 'x', service: 's', start: 1, attributes: { step: 2 } },
    ]);
    const hops: Hop[] = [
      { id: 'first', match: { name: 'x' } },
      { id: 'second', match: { name: 'x' }, under: 'first', link: 'child' },
      { id: 'third', match: { name: 'x' } },
    ];
    const check = checkHops(t, hops);
    expect(check.matched.first!.spanId).toBe(spanId('a'));
    expect(check.matched.second!.spanId).toBe(spanId('b'));
    expect(check.problems).toEqual(['third: no span with name x']);
    expect(checkHops(t, [{ id: 'by-attr', match: { attributes: { step: 2 } } }]).matched['by-attr']!.spanId).toBe(spanId('b'));
    expect(() => checkHops(t, [{ id: 'a', match: {}, under: 'later' }])).toThrow(/not an earlier hop/);
    expect(() => checkHops(t, [{ id: 'a', match: {}, linksTo: 'later' }])).toThrow(/not an earlier hop/);
  });

  it('findTrace picks the passing trace among several', () => {
    const other = buildTraces(spansFromOtlpJson(otlp(scaleUp.slice(0, 4), 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee')));
    const full = buildTraces(spansFromOtlpJson(otlp(scaleUp)));
    expect(findTrace([...other, ...full], scaleUpHops()).tree?.traceId).toBe(TRACE);
    expect(findTrace(other, scaleUpHops()).check?.ok).toBe(false);
    expect(findTrace([], scaleUpHops())).toEqual({});
  });
});

describe('startTraceSink', () => {
  let sink: TraceSink | undefined;
  afterEach(async () => {
    await sink?.close();
    sink = undefined;
  });

  const post = (body: Buffer | string, headers: Record<string, string>) =>
    fetch(`${sink!.endpoint}/v1/traces`, { method: 'POST', headers, body });

  it('collects OTLP JSON (plain and gzip) and resolves waitForTrace once the trace is whole', async () => {
    sink = await startTraceSink();
    const controller = new AbortController();
    const waiting = sink.waitForTrace(scaleUpHops(), controller.signal);
    const half = Math.floor(scaleUp.length / 2);
    expect((await post(JSON.stringify(otlp(scaleUp.slice(0, half))), { 'content-type': 'application/json' })).status).toBe(200);
    const gz = gzipSync(JSON.stringify(otlp(scaleUp.slice(half))));
    expect((await post(gz, { 'content-type': 'application/json', 'content-encoding': 'gzip' })).status).toBe(200);
    const { tree: found, check } = await waiting;
    expect(check.ok).toBe(true);
    expect(found.spans).toHaveLength(scaleUp.length);
    expect(sink.spans()).toHaveLength(scaleUp.length);
  });

  it('refuses protobuf and malformed JSON, and rejects waitForTrace with the closest trace on abort', async () => {
    sink = await startTraceSink();
    expect((await post('x', { 'content-type': 'application/x-protobuf' })).status).toBe(415);
    expect((await post('{', { 'content-type': 'application/json' })).status).toBe(400);
    expect((await fetch(`${sink.endpoint}/v1/metrics`, { method: 'POST' })).status).toBe(404);
    expect(sink.rejected).toHaveLength(2);
    await post(JSON.stringify(otlp(scaleUp.slice(0, 5))), { 'content-type': 'application/json' });
    const controller = new AbortController();
    const waiting = sink.waitForTrace(scaleUpHops(), controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow(/closest trace:[\s\S]*deliver-assign: no span/);
  });
});
