// The API server's transition rules, as the simulator's API server applies them to a user's edit: every field the
// CRD marks immutable (CEL `self == oldSelf`) keeps its value when both the old and the new object have it. Read from
// the schema itself (lib/api/schema.ts), so a field made immutable there is immutable here without a second list.
import { swarmSchema, type SchemaNode } from '../../lib/api/schema.js';

const immutable = (node: SchemaNode): boolean =>
  Array.isArray(node['x-kubernetes-validations']) && (node['x-kubernetes-validations'] as { rule?: string }[]).some((v) => v.rule === 'self == oldSelf');

function* immutablePaths(node: SchemaNode, path: string[]): Generator<string[]> {
  if (immutable(node)) yield path;
  const properties = node.properties as Record<string, SchemaNode> | undefined;
  for (const [name, child] of Object.entries(properties ?? {})) yield* immutablePaths(child, [...path, name]);
}

const PATHS = [...immutablePaths(swarmSchema, [])];

const at = (obj: unknown, path: string[]): unknown => path.reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Record<string, unknown>)[k] : undefined), obj);

/** The immutable fields an edit changes (dotted paths); empty: the API server takes it. */
export function immutableChanges(before: unknown, after: unknown): string[] {
  return PATHS.filter((p) => {
    const [a, b] = [at(before, p), at(after, p)];
    return a !== undefined && b !== undefined && JSON.stringify(a) !== JSON.stringify(b);
  }).map((p) => p.join('.'));
}
