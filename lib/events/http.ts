// HTTP request → CloudEvent, via the SDK, in binary or structured content mode.
// Every way the request can be wrong ends in a BadEventError naming the problem.
import { HTTP, ValidationError } from 'cloudevents';
import type { CloudEvent } from 'cloudevents';
import { BadEventError } from './errors.js';
import { toTrigger } from './trigger.js';

/**
 * etcd stores objects up to 1.5 MiB; a resource-mode event carries one object
 * plus a small envelope, so twice that leaves room without inviting abuse.
 */
export const DEFAULT_MAX_BODY_BYTES = 3 * 1024 * 1024;

export type IncomingHeaders = Record<string, string | string[] | undefined>;

export interface FromHttpOptions {
  maxBodyBytes?: number;
}

function normalize(headers: IncomingHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function mediaType(contentType: string | undefined): string {
  return (contentType ?? '').split(';')[0]!.trim().toLowerCase();
}

/** Which content mode the request claims, or why it is not a CloudEvent we take. */
function contentMode(headers: Record<string, string>): 'binary' | 'structured' {
  const type = mediaType(headers['content-type']);
  if (type === 'application/cloudevents-batch+json') throw new BadEventError(415, 'batched CloudEvents are not supported: send one event per request');
  if (type.startsWith('application/cloudevents')) {
    if (type !== 'application/cloudevents+json') throw new BadEventError(415, `unsupported structured event format ${type}: only application/cloudevents+json`);
    return 'structured';
  }
  if (!Object.keys(headers).some((name) => name.startsWith('ce-'))) {
    throw new BadEventError(400, 'not a CloudEvent: no ce-* headers (binary mode) and content type is not application/cloudevents+json (structured mode)');
  }
  if (type !== 'application/json') {
    throw new BadEventError(415, `unsupported data content type ${JSON.stringify(type || '<none>')}: events carry Kubernetes objects as application/json`);
  }
  return 'binary';
}

function validationProblem(err: unknown): string {
  if (err instanceof ValidationError) {
    const details = (err.errors ?? []).map((e) => (typeof e === 'string' ? e : `${e.instancePath || '<event>'} ${e.message ?? e.keyword}`));
    // The SDK appends the raw errors as JSON on further lines: keep its first line, list ours.
    return `malformed CloudEvent: ${[err.message.split('\n')[0], ...details].join('; ')}`;
  }
  if (err instanceof SyntaxError) return `malformed CloudEvent: body is not valid JSON (${err.message})`;
  return `malformed CloudEvent: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`;
}

/** CloudEvents 1.0 required context attributes; the SDK would invent a missing id or specversion. */
const REQUIRED_ATTRIBUTES = ['id', 'source', 'type', 'specversion'] as const;
/** The SDK also reads 0.3, and then validates nothing: take 1.0 alone. */
const SPEC_VERSION = '1.0';

function missingAttributes(read: (attribute: string) => unknown): string[] {
  return REQUIRED_ATTRIBUTES.filter((a) => {
    const value = read(a);
    return typeof value !== 'string' || value === '';
  });
}

function checkSpecVersion(specversion: unknown): void {
  if (specversion !== SPEC_VERSION) {
    throw new BadEventError(400, `malformed CloudEvent: unsupported specversion ${JSON.stringify(specversion)}: Swarm takes CloudEvents ${SPEC_VERSION} only`);
  }
}

/** Structured mode: parse the envelope ourselves, so a missing attribute is reported, not defaulted. */
function structuredEnvelope(body: string): Record<string, unknown> {
  if (body.trim() === '') throw new BadEventError(400, 'malformed CloudEvent: structured mode with an empty body');
  let envelope: unknown;
  try {
    envelope = JSON.parse(body);
  } catch (err) {
    throw new BadEventError(400, validationProblem(err));
  }
  if (typeof envelope !== 'object' || envelope === null || Array.isArray(envelope)) {
    throw new BadEventError(400, 'malformed CloudEvent: a structured event must be a JSON object');
  }
  const record = envelope as Record<string, unknown>;
  const absent = missingAttributes((a) => record[a]);
  if (absent.length > 0) throw new BadEventError(400, `malformed CloudEvent: missing required attribute ${absent.join(', ')}`);
  checkSpecVersion(record.specversion);
  return record;
}

/** Binary mode: the same checks on the ce-* headers. */
function checkBinaryHeaders(headers: Record<string, string>): void {
  const absent = missingAttributes((a) => headers[`ce-${a}`]);
  if (absent.length > 0) {
    throw new BadEventError(400, `malformed CloudEvent: missing required attribute ${absent.join(', ')} (${absent.map((a) => `ce-${a}`).join(', ')} header)`);
  }
  checkSpecVersion(headers['ce-specversion']);
}

export function fromHttp(headers: IncomingHeaders, rawBody: Buffer, options: FromHttpOptions = {}): CloudEvent<unknown> {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  if (rawBody.length > limit) throw new BadEventError(413, `body of ${rawBody.length} bytes exceeds the limit of ${limit} bytes`);
  const clean = normalize(headers);
  const mode = contentMode(clean);
  // The SDK matches content types exactly (a charset or capitals make it take JSON as a string):
  // hand it the bare media type we already compared case-insensitively.
  clean['content-type'] = mode === 'structured' ? 'application/cloudevents+json' : 'application/json';
  const text = rawBody.toString('utf8');
  let body: string | Record<string, unknown> = text;
  if (mode === 'structured') body = structuredEnvelope(text);
  else checkBinaryHeaders(clean);
  let event: CloudEvent<unknown>;
  try {
    const parsed = HTTP.toEvent<unknown>({ headers: clean, body });
    if (Array.isArray(parsed)) throw new BadEventError(415, 'batched CloudEvents are not supported: send one event per request');
    event = parsed as CloudEvent<unknown>;
    // The SDK skips validation when parsing binary mode; ask for it explicitly.
    event.validate();
  } catch (err) {
    if (err instanceof BadEventError) throw err;
    throw new BadEventError(400, validationProblem(err));
  }
  // Type, kind and data shape: throws 422 when the event is well formed but not ours.
  toTrigger(event);
  return event;
}
