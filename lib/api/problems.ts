// ajv errors → one line per problem, naming the field: `spec.workload.jobs[3].weight: must be ≤ 1000`.
import type { ErrorObject } from 'ajv';
import { PATTERN_MEANINGS } from './schema.js';

/** `/spec/workload/jobs/3/weight` → `spec.workload.jobs[3].weight`. */
export function fieldPath(instancePath: string, child?: string): string {
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
 * Needs ajv's `verbose` option (errors carry `schema` and `data`).
 */
function focusUnions(errors: readonly ErrorObject[]): ErrorObject[] {
  let kept = [...errors];
  for (const union of errors.filter((e) => e.keyword === 'anyOf')) {
    const branches = union.schema as Array<{ type?: string }>;
    const actual = jsonType(union.data);
    const matching = branches.findIndex((b) => b.type === actual || (b.type === 'number' && actual === 'integer'));
    // schemaPath is shared by every item of an array: tell them apart by instancePath.
    const inUnion = (e: ErrorObject) =>
      e.schemaPath.startsWith(`${union.schemaPath}/`) &&
      (e.instancePath === union.instancePath || e.instancePath.startsWith(`${union.instancePath}/`));
    if (matching >= 0) {
      const prefix = `${union.schemaPath}/${matching}/`;
      kept = kept.filter((e) => e === union ? false : !inUnion(e) || e.schemaPath.startsWith(prefix));
    } else {
      const accepted = branches.map((b) => b.type).join(' or ');
      kept = kept.filter((e) => !inUnion(e));
      kept = kept.map((e) => (e === union ? { ...e, keyword: 'type', params: { type: accepted } } : e));
    }
  }
  return kept;
}

export function problemsFrom(errors: readonly ErrorObject[] | null | undefined): string[] {
  return [...new Set(focusUnions(errors ?? []).map(describe))];
}
