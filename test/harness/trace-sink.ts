// A trace sink for tests: a small OTLP/HTTP receiver (JSON encoding, as the
// collector's otlphttp exporter sends it with `encoding: json`) that keeps
// every span it is given, and the pure functions that turn collected spans
// into traces (trace id → tree by parentSpanId) and check a trace for a
// sequence of expected hops with the right parent links.
//
//   npx tsx test/harness/trace-sink.ts [--port 4319] [--host 0.0.0.0]
//
// runs it on its own and prints each trace as a tree (test/controlplane/README.md: "Tracing one
// change through Knative").
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { gunzipSync, inflateSync } from 'node:zlib';

// ---------------------------------------------------------------------------
// OTLP JSON → spans (pure)

export type SpanKindName = 'unspecified' | 'internal' | 'server' | 'client' | 'producer' | 'consumer';

export type AttributeValue = string | number | boolean | readonly AttributeValue[] | null;

export interface CollectedSpan {
  /** Lower-case hex, 32 digits. */
  readonly traceId: string;
  /** Lower-case hex, 16 digits. */
  readonly spanId: string;
  /** Absent for a root span. */
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: SpanKindName;
  /** The resource's service.name ('' when none). */
  readonly service: string;
  /** The instrumentation scope's name. */
  readonly scope: string;
  /** Nanoseconds since the epoch (decimal string in OTLP JSON). */
  readonly startTimeUnixNano: bigint;
  readonly endTimeUnixNano: bigint;
  readonly attributes: Readonly<Record<string, AttributeValue>>;
  readonly resource: Readonly<Record<string, AttributeValue>>;
  /** 'unset' | 'ok' | 'error'. */
  readonly status: 'unset' | 'ok' | 'error';
  /** Span links (the spans this one names besides its parent), absent when none. */
  readonly links?: readonly { readonly traceId: string; readonly spanId: string }[];
}

const KINDS: readonly SpanKindName[] = ['unspecified', 'internal', 'server', 'client', 'producer', 'consumer'];
const STATUSES = ['unset', 'ok', 'error'] as const;

function record(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`OTLP JSON: ${what} is not an object`);
  return value as Record<string, unknown>;
}

function list(value: unknown, what: string): unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new Error(`OTLP JSON: ${what} is not an array`);
  return value;
}

/** OTLP JSON ids are hex (not base64, unlike protobuf's canonical JSON mapping); empty means none. */
function hexId(value: unknown, digits: number, what: string): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || !new RegExp(`^[0-9a-fA-F]{${digits}}$`).test(value)) {
    throw new Error(`OTLP JSON: ${what} ${JSON.stringify(value)} is not ${digits} hex digits`);
  }
  if (/^0+$/.test(value)) return undefined;
  return value.toLowerCase();
}

function anyValue(value: unknown): AttributeValue {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (typeof v.stringValue === 'string') return v.stringValue;
  if (typeof v.boolValue === 'boolean') return v.boolValue;
  // int64 is a decimal string in OTLP JSON; a number is accepted too.
  if (typeof v.intValue === 'string' || typeof v.intValue === 'number') return Number(v.intValue);
  if (typeof v.doubleValue === 'number' || typeof v.doubleValue === 'string') return Number(v.doubleValue);
  if (typeof v.arrayValue === 'object' && v.arrayValue !== null) {
    return list((v.arrayValue as Record<string, unknown>).values, 'arrayValue.values').map(anyValue);
  }
  if (typeof v.bytesValue === 'string') return v.bytesValue;
  return null;
}

function attributes(value: unknown, what: string): Record<string, AttributeValue> {
  const out: Record<string, AttributeValue> = {};
  for (const entry of list(value, what)) {
    const kv = record(entry, `${what} entry`);
    if (typeof kv.key === 'string') out[kv.key] = anyValue(kv.value);
  }
  return out;
}

function kindOf(value: unknown): SpanKindName {
  if (typeof value === 'number') return KINDS[value] ?? 'unspecified';
  if (typeof value === 'string') {
    const name = value.replace(/^SPAN_KIND_/, '').toLowerCase();
    return KINDS.find((k) => k === name) ?? 'unspecified';
  }
  return 'unspecified';
}

function statusOf(value: unknown): CollectedSpan['status'] {
  if (typeof value !== 'object' || value === null) return 'unset';
  const code = (value as Record<string, unknown>).code;
  if (typeof code === 'number') return STATUSES[code] ?? 'unset';
  if (typeof code === 'string') {
    const name = code.replace(/^STATUS_CODE_/, '').toLowerCase();
    return STATUSES.find((s) => s === name) ?? 'unset';
  }
  return 'unset';
}

function nanos(value: unknown): bigint {
  if (typeof value === 'string' && /^\d+$/.test(value)) return BigInt(value);
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return BigInt(value);
  return 0n;
}

/** The spans of one OTLP ExportTraceServiceRequest in JSON encoding. Throws on a malformed body. */
export function spansFromOtlpJson(body: unknown): CollectedSpan[] {
  const spans: CollectedSpan[] = [];
  for (const rs of list(record(body, 'request').resourceSpans, 'resourceSpans')) {
    const resourceSpans = record(rs, 'resourceSpans entry');
    const resource = attributes(
      resourceSpans.resource === undefined ? [] : record(resourceSpans.resource, 'resource').attributes,
      'resource.attributes',
    );
    const service = typeof resource['service.name'] === 'string' ? resource['service.name'] : '';
    for (const ss of list(resourceSpans.scopeSpans, 'scopeSpans')) {
      const scopeSpans = record(ss, 'scopeSpans entry');
      const scopeName = scopeSpans.scope === undefined ? undefined : record(scopeSpans.scope, 'scope').name;
      const scope = typeof scopeName === 'string' ? scopeName : '';
      for (const s of list(scopeSpans.spans, 'spans')) {
        const span = record(s, 'span');
        const traceId = hexId(span.traceId, 32, 'traceId');
        const spanId = hexId(span.spanId, 16, 'spanId');
        if (!traceId || !spanId) throw new Error('OTLP JSON: a span without traceId or spanId');
        const parentSpanId = hexId(span.parentSpanId, 16, 'parentSpanId');
        const links = list(span.links, 'span.links').flatMap((l) => {
          const link = record(l, 'span link');
          const linkTrace = hexId(link.traceId, 32, 'link traceId');
          const linkSpan = hexId(link.spanId, 16, 'link spanId');
          return linkTrace && linkSpan ? [{ traceId: linkTrace, spanId: linkSpan }] : [];
        });
        spans.push({
          traceId,
          spanId,
          ...(parentSpanId ? { parentSpanId } : {}),
          name: typeof span.name === 'string' ? span.name : '',
          kind: kindOf(span.kind),
          service,
          scope,
          startTimeUnixNano: nanos(span.startTimeUnixNano),
          endTimeUnixNano: nanos(span.endTimeUnixNano),
          attributes: attributes(span.attributes, 'span.attributes'),
          resource,
          status: statusOf(span.status),
          ...(links.length ? { links } : {}),
        });
      }
    }
  }
  return spans;
}

// ---------------------------------------------------------------------------
// Spans → traces (pure)

export interface TraceTree {
  readonly traceId: string;
  /** Every span of the trace, by start time. */
  readonly spans: readonly CollectedSpan[];
  readonly byId: ReadonlyMap<string, CollectedSpan>;
  /** Children of each span id, by start time. */
  readonly children: ReadonlyMap<string, readonly CollectedSpan[]>;
  /** Spans without a parent, or whose parent is not (yet) among the spans: by start time. */
  readonly roots: readonly CollectedSpan[];
  /** Parent span ids named by some span but absent from the trace. */
  readonly missingParents: readonly string[];
}

const byStart = (a: CollectedSpan, b: CollectedSpan) =>
  a.startTimeUnixNano < b.startTimeUnixNano ? -1 : a.startTimeUnixNano > b.startTimeUnixNano ? 1 : a.spanId.localeCompare(b.spanId);

/**
 * Groups spans into traces. A span received twice (an exporter retry) counts
 * once. Traces are ordered by their earliest span.
 */
export function buildTraces(spans: readonly CollectedSpan[]): TraceTree[] {
  const groups = new Map<string, Map<string, CollectedSpan>>();
  for (const span of spans) {
    let group = groups.get(span.traceId);
    if (!group) groups.set(span.traceId, (group = new Map()));
    if (!group.has(span.spanId)) group.set(span.spanId, span);
  }
  const trees = [...groups].map(([traceId, byId]): TraceTree => {
    const sorted = [...byId.values()].sort(byStart);
    const children = new Map<string, CollectedSpan[]>();
    const roots: CollectedSpan[] = [];
    const missing = new Set<string>();
    for (const span of sorted) {
      if (span.parentSpanId && byId.has(span.parentSpanId)) {
        const siblings = children.get(span.parentSpanId);
        if (siblings) siblings.push(span);
        else children.set(span.parentSpanId, [span]);
      } else {
        if (span.parentSpanId) missing.add(span.parentSpanId);
        roots.push(span);
      }
    }
    return { traceId, spans: sorted, byId, children, roots, missingParents: [...missing] };
  });
  return trees.sort((a, b) => byStart(a.spans[0]!, b.spans[0]!));
}

/** The ancestors of `span` in `tree`, nearest first (stops where a parent is missing). */
export function ancestorsOf(tree: TraceTree, span: CollectedSpan): CollectedSpan[] {
  const out: CollectedSpan[] = [];
  const seen = new Set<string>([span.spanId]);
  let parentId = span.parentSpanId;
  while (parentId && !seen.has(parentId)) {
    const parent = tree.byId.get(parentId);
    if (!parent) break;
    out.push(parent);
    seen.add(parentId);
    parentId = parent.parentSpanId;
  }
  return out;
}

/** One line per span, indented by depth: `service: name [kind]`. */
export function formatTrace(tree: TraceTree): string {
  const lines = [`trace ${tree.traceId} (${tree.spans.length} spans)`];
  const walk = (span: CollectedSpan, depth: number, seen: Set<string>) => {
    if (seen.has(span.spanId)) return;
    seen.add(span.spanId);
    const status = span.status === 'error' ? ' ERROR' : '';
    const missing = span.parentSpanId && !tree.byId.has(span.parentSpanId) ? ` (parent ${span.parentSpanId} not received)` : '';
    const linked = (span.links ?? []).map((l) => {
      const target = l.traceId === tree.traceId ? tree.byId.get(l.spanId) : undefined;
      return ` → link ${target ? `${target.service}: ${target.name}` : `${l.traceId}/${l.spanId}`}`;
    });
    lines.push(`${'  '.repeat(depth + 1)}${span.service || '?'}: ${span.name} [${span.kind}]${status}${missing}${linked.join('')}`);
    for (const child of tree.children.get(span.spanId) ?? []) walk(child, depth + 1, seen);
  };
  const seen = new Set<string>();
  for (const root of tree.roots) walk(root, 0, seen);
  return lines.join('\n');
}

// ---------------------------------------------------------------------------
// Expected hops (pure)

export interface SpanMatcher {
  /** Resource service.name, exactly. */
  readonly service?: string;
  /** Span name: exactly (string) or a pattern. */
  readonly name?: string | RegExp;
  readonly kind?: SpanKindName;
  /** Attributes that must be present with these values. */
  readonly attributes?: Readonly<Record<string, string | number | boolean>>;
}

export interface Hop {
  /** How the hop is named in results and messages ('assign', 'reply', …). */
  readonly id: string;
  readonly match: SpanMatcher | ((span: CollectedSpan) => boolean);
  /** An earlier hop this one must hang under. */
  readonly under?: string;
  /**
   * 'child': the parent span is the `under` hop's span itself. 'descendant'
   * (default): the `under` hop's span is an ancestor, with any spans between
   * (Knative's HTTP server and client spans, activator, queue-proxy).
   */
  readonly link?: 'child' | 'descendant';
  /** An earlier hop whose span this one's names in a span link (the CloudEvent's maker). */
  readonly linksTo?: string;
}

export interface HopCheck {
  readonly ok: boolean;
  /** The span matched for each hop found. */
  readonly matched: Readonly<Record<string, CollectedSpan>>;
  /** One sentence per hop not found or linked wrongly. */
  readonly problems: readonly string[];
}

export function matches(span: CollectedSpan, matcher: Hop['match']): boolean {
  if (typeof matcher === 'function') return matcher(span);
  if (matcher.service !== undefined && span.service !== matcher.service) return false;
  if (matcher.kind !== undefined && span.kind !== matcher.kind) return false;
  if (matcher.name !== undefined) {
    if (typeof matcher.name === 'string' ? span.name !== matcher.name : !matcher.name.test(span.name)) return false;
  }
  for (const [key, value] of Object.entries(matcher.attributes ?? {})) {
    if (span.attributes[key] !== value) return false;
  }
  return true;
}

function describeMatcher(matcher: Hop['match']): string {
  if (typeof matcher === 'function') return 'a span accepted by its predicate';
  const parts: string[] = [];
  if (matcher.service !== undefined) parts.push(`service ${matcher.service}`);
  if (matcher.name !== undefined) parts.push(`name ${String(matcher.name)}`);
  if (matcher.kind !== undefined) parts.push(`kind ${matcher.kind}`);
  for (const [key, value] of Object.entries(matcher.attributes ?? {})) parts.push(`${key}=${String(value)}`);
  return parts.length ? parts.join(', ') : 'any span';
}

/**
 * Checks `tree` for `hops`, in order: each hop is the earliest span that
 * matches, is not already another hop's span, and hangs under the span of its
 * `under` hop as its `link` says. A hop whose `under` hop was not found is
 * reported as such, not searched for.
 */
export function checkHops(tree: TraceTree, hops: readonly Hop[]): HopCheck {
  const matched: Record<string, CollectedSpan> = {};
  const taken = new Set<string>();
  const problems: string[] = [];
  const ids = new Set<string>();
  for (const hop of hops) {
    if (ids.has(hop.id)) throw new Error(`hop ${hop.id} is listed twice`);
    if (hop.under !== undefined && !ids.has(hop.under)) throw new Error(`hop ${hop.id} is under ${hop.under}, which is not an earlier hop`);
    if (hop.linksTo !== undefined && !ids.has(hop.linksTo)) throw new Error(`hop ${hop.id} links to ${hop.linksTo}, which is not an earlier hop`);
    ids.add(hop.id);
    let candidates = tree.spans.filter((span) => !taken.has(span.spanId) && matches(span, hop.match));
    if (candidates.length === 0) {
      problems.push(`${hop.id}: no span with ${describeMatcher(hop.match)}`);
      continue;
    }
    if (hop.linksTo !== undefined) {
      const target = matched[hop.linksTo];
      if (!target) {
        problems.push(`${hop.id}: not checked, the hop it links to, ${hop.linksTo}, was not found`);
        continue;
      }
      candidates = candidates.filter((span) => (span.links ?? []).some((l) => l.spanId === target.spanId && l.traceId === target.traceId));
      if (candidates.length === 0) {
        problems.push(`${hop.id}: no span with ${describeMatcher(hop.match)} links to ${hop.linksTo} (${target.service}: ${target.name})`);
        continue;
      }
    }
    if (hop.under === undefined) {
      const span = candidates[0]!;
      matched[hop.id] = span;
      taken.add(span.spanId);
      continue;
    }
    const parent = matched[hop.under];
    if (!parent) {
      problems.push(`${hop.id}: not checked, its parent hop ${hop.under} was not found`);
      continue;
    }
    const link = hop.link ?? 'descendant';
    const linked = candidates.find((span) =>
      link === 'child' ? span.parentSpanId === parent.spanId : ancestorsOf(tree, span).some((a) => a.spanId === parent.spanId),
    );
    if (!linked) {
      const first = candidates[0]!;
      const actual = first.parentSpanId ? tree.byId.get(first.parentSpanId) : undefined;
      const parentText = !first.parentSpanId
        ? 'is a root'
        : actual
          ? `has parent ${actual.service}: ${actual.name}`
          : `has parent ${first.parentSpanId}, not received`;
      problems.push(
        `${hop.id}: ${candidates.length} span(s) with ${describeMatcher(hop.match)}, none a ${link} of ${hop.under} (${parent.service}: ${parent.name}); ${first.service}: ${first.name} ${parentText}`,
      );
      continue;
    }
    matched[hop.id] = linked;
    taken.add(linked.spanId);
  }
  return { ok: problems.length === 0, matched, problems };
}

/** The first trace (by start) that passes `hops`, else the closest one (fewest problems) with its check. */
export function findTrace(trees: readonly TraceTree[], hops: readonly Hop[]): { tree?: TraceTree; check?: HopCheck } {
  let best: { tree: TraceTree; check: HopCheck } | undefined;
  for (const tree of trees) {
    const check = checkHops(tree, hops);
    if (check.ok) return { tree, check };
    if (!best || check.problems.length < best.check.problems.length) best = { tree, check };
  }
  return best ?? {};
}

// ---------------------------------------------------------------------------
// The receiver (shell)

export interface TraceSinkOptions {
  /** Default 127.0.0.1; 0.0.0.0 to be reachable from pods (through the node's bridge address). */
  readonly host?: string;
  /** Default 0 (any free port). */
  readonly port?: number;
  /** Called with the spans of each accepted request. */
  readonly onSpans?: (spans: readonly CollectedSpan[]) => void;
}

export interface TraceSink {
  readonly server: Server;
  readonly port: number;
  /** http://<host>:<port>, the otlphttp exporter's `endpoint` (it appends /v1/traces). */
  readonly endpoint: string;
  /** Every span received so far, in arrival order. */
  spans(): readonly CollectedSpan[];
  traces(): TraceTree[];
  /** Requests refused (malformed body, protobuf), with the reason. */
  readonly rejected: readonly string[];
  /** Resolves with the first trace passing `hops`; rejects with the closest trace's problems when `signal` aborts. */
  waitForTrace(hops: readonly Hop[], signal: AbortSignal): Promise<{ tree: TraceTree; check: HopCheck }>;
  close(): Promise<void>;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`body larger than ${limit} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function decode(body: Buffer, encoding: string | undefined): Buffer {
  switch ((encoding ?? '').trim().toLowerCase()) {
    case '':
    case 'identity':
      return body;
    case 'gzip':
      return gunzipSync(body);
    case 'deflate':
      return inflateSync(body);
    default:
      throw new Error(`content-encoding ${encoding} is not supported`);
  }
}

/** Starts the receiver: POST /v1/traces with Content-Type application/json. */
export async function startTraceSink(options: TraceSinkOptions = {}): Promise<TraceSink> {
  const received: CollectedSpan[] = [];
  const rejected: string[] = [];
  const waiters = new Set<() => void>();
  const server = createServer((req, res) => {
    const answer = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (req.method !== 'POST' || (req.url ?? '').split('?')[0] !== '/v1/traces') {
      answer(404, { message: 'POST /v1/traces only' });
      return;
    }
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (type !== 'application/json') {
      rejected.push(`content-type ${type || '(none)'}`);
      // Permanent for the exporter: no retry storm while misconfigured.
      answer(415, { message: 'this sink takes OTLP JSON only (otlphttp exporter: encoding: json)' });
      return;
    }
    readBody(req, 64 * 1024 * 1024)
      .then((raw) => {
        const spans = spansFromOtlpJson(JSON.parse(decode(raw, req.headers['content-encoding']).toString('utf8')));
        received.push(...spans);
        options.onSpans?.(spans);
        answer(200, {});
        for (const wake of [...waiters]) wake();
      })
      .catch((err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        rejected.push(reason);
        answer(400, { message: reason });
      });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  return {
    server,
    port,
    endpoint: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    spans: () => received,
    traces: () => buildTraces(received),
    rejected,
    waitForTrace: (hops, signal) =>
      new Promise((resolve, reject) => {
        const attempt = () => {
          const found = findTrace(buildTraces(received), hops);
          if (found.tree && found.check?.ok) {
            finish();
            resolve({ tree: found.tree, check: found.check });
            return true;
          }
          return false;
        };
        const onAbort = () => {
          finish();
          const found = findTrace(buildTraces(received), hops);
          const detail = found.tree && found.check
            ? `closest trace:\n${formatTrace(found.tree)}\nproblems:\n  ${found.check.problems.join('\n  ')}`
            : `no spans received${rejected.length ? ` (rejected: ${rejected.join('; ')})` : ''}`;
          reject(new Error(`no trace with the expected hops: ${detail}`));
        };
        const wake = () => void attempt();
        const finish = () => {
          waiters.delete(wake);
          signal.removeEventListener('abort', onAbort);
        };
        if (attempt()) return;
        if (signal.aborted) {
          onAbort();
          return;
        }
        waiters.add(wake);
        signal.addEventListener('abort', onAbort, { once: true });
      }),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

// Run directly: receive and print each trace as it grows (quiet 2 s after the last batch).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const flag = (name: string) => {
    const i = args.indexOf(name);
    return i >= 0 ? args[i + 1] : undefined;
  };
  const printed = new Map<string, number>();
  let timer: NodeJS.Timeout | undefined;
  const sinkPromise = startTraceSink({
    host: flag('--host') ?? '0.0.0.0',
    port: Number(flag('--port') ?? 4319),
    onSpans: () => {
      if (timer) clearTimeout(timer);
      timer = setTimeout(() => {
        void sinkPromise.then((sink) => {
          for (const tree of sink.traces()) {
            if (printed.get(tree.traceId) === tree.spans.length) continue;
            printed.set(tree.traceId, tree.spans.length);
            process.stdout.write(`${formatTrace(tree)}\n\n`);
          }
        });
      }, 2000);
    },
  });
  sinkPromise.then(
    (sink) => {
      process.stdout.write(`trace sink: POST http://<this host>:${sink.port}/v1/traces (OTLP JSON)\n`);
      const stop = () => void sink.close().then(() => process.exit(0));
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
    },
    (err: unknown) => {
      process.stderr.write(`trace sink: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
