// ajv errors → one line per problem, naming the field: `spec.workload.jobs[3].weight: must be ≤ 1000`.
import type { ErrorObject } from 'ajv';
import { PATTERN_MEANINGS } from './schema.js';

/** `/spec/workload/jobs/3/weight` → `spec.workload.jobs[3].weight`. */
function fieldPath(instancePath: string, child?: string): string {
  const segments = instancePath.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) segments.push(child);
  let out = '';
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else out += out === '' ? segment : `.${segment}`;
  }
  return out || '<root>';
}

function jsonType(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function describe(error: ErrorObject): string {
  const p = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${fieldPath(error.instancePath, String(p.missingProperty))}: is required`;
    case 'additionalProperties':
      return `${fieldPath(error.instancePath, String(p.additionalProperty))}: is not a known field`;
    case 'type':
      return `${fieldPath(error.instancePath)}: must be ${String(p.type)}, not ${jsonType(error.data)}`;
    case 'maximum':
      return `${fieldPath(error.instancePath)}: must be ≤ ${String(p.limit)}`;
    case 'minimum':
      return `${fieldPath(error.instancePath)}: must be ≥ ${String(p.limit)}`;
    case 'maxLength':
      return `${fieldPath(error.instancePath)}: must be at most ${String(p.limit)} characters`;
    case 'minLength':
      return `${fieldPath(error.instancePath)}: must not be empty`;
    case 'maxItems':
      return `${fieldPath(error.instancePath)}: must have at most ${String(p.limit)} items`;
    case 'enum':
      return `${fieldPath(error.instancePath)}: must be one of ${(p.allowedValues as unknown[]).join(', ')}`;
    case 'pattern':
      return `${fieldPath(error.instancePath)}: ${PATTERN_MEANINGS[String(p.pattern)] ?? `must match ${String(p.pattern)}`}`;
    default:
      return `${fieldPath(error.instancePath)}: ${error.message ?? error.keyword}`;
  }
}

/**
 * A union (`anyOf`) fails with the errors of every branch, which reads badly
 * ("must be string … must be object"). Keep only the errors of the branch whose
 * `type` matches the value; when none does, say what the union accepts.
 * Needs ajv's `verbose` option (errors carry `schema` and `data`). Linear in the
 * number of errors: a list of 10000 bad jobs must not cost quadratic time.
 */
function focusUnions(errors: readonly ErrorObject[]): ErrorObject[] {
  // schemaPath is shared by every item of an array: a union is its schemaPath *and* instancePath.
  const key = (schemaPath: string, instancePath: string) => `${schemaPath}\u0000${instancePath}`;
  const unions = new Map<string, { matching: number; accepted: string }>();
  for (const e of errors) {
    if (e.keyword !== 'anyOf') continue;
    const branches = e.schema as Array<{ type?: string }>;
    const actual = jsonType(e.data);
    const matching = branches.findIndex((b) => b.type === actual || (b.type === 'number' && actual === 'integer'));
    unions.set(key(e.schemaPath, e.instancePath), { matching, accepted: branches.map((b) => b.type).join(' or ') });
  }
  if (unions.size === 0) return [...errors];
  const kept: ErrorObject[] = [];
  for (const e of errors) {
    const union = unions.get(key(e.schemaPath, e.instancePath));
    if (e.keyword === 'anyOf' && union) {
      if (union.matching < 0) kept.push({ ...e, keyword: 'type', params: { type: union.accepted } });
      continue;
    }
    const enclosing = enclosingUnion(e, unions);
    if (!enclosing || (enclosing.union.matching >= 0 && enclosing.branch === enclosing.union.matching)) kept.push(e);
  }
  return kept;
}

/** The innermost union an error comes from, and which of its branches. */
function enclosingUnion(
  e: ErrorObject,
  unions: Map<string, { matching: number; accepted: string }>,
): { union: { matching: number; accepted: string }; branch: number } | undefined {
  const at = e.schemaPath.lastIndexOf('/anyOf/');
  if (at < 0) return undefined;
  const unionSchemaPath = e.schemaPath.slice(0, at + '/anyOf'.length);
  const branch = Number(e.schemaPath.slice(at + '/anyOf/'.length).split('/')[0]);
  // The union sits at the error's instancePath or one of its ancestors.
  for (let path = e.instancePath; ; path = path.slice(0, path.lastIndexOf('/'))) {
    const union = unions.get(`${unionSchemaPath}\u0000${path}`);
    if (union) return { union, branch };
    if (path === '') return undefined;
  }
}

export function problemsFrom(errors: readonly ErrorObject[] | null | undefined): string[] {
  return [...new Set(focusUnions(errors ?? []).map(describe))];
}
