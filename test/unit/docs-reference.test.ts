// docs/reference.md is what dev/api-reference.ts renders from the one schema,
// and it names every field of spec and status.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { renderApiReference } from '../../dev/api-reference.js';
import { swarmSchema, type SchemaNode } from '../../lib/api/schema.js';

const referencePath = new URL('../../docs/reference.md', import.meta.url);

/** Every property name below `node` (objects, array items, union branches). */
function propertyNames(node: SchemaNode): string[] {
  const own = Object.entries((node.properties ?? {}) as Record<string, SchemaNode>).flatMap(([name, child]) => [name, ...propertyNames(child)]);
  const items = node.items ? propertyNames(node.items as SchemaNode) : [];
  const branches = ((node.anyOf ?? []) as SchemaNode[]).flatMap(propertyNames);
  return [...own, ...items, ...branches];
}

describe('the committed API reference', () => {
  it('is exactly what npm run generate:docs writes (never edited by hand)', () => {
    expect(readFileSync(referencePath, 'utf8')).toBe(renderApiReference());
  });

  it('names every field of spec and status: a row of its own, or in its object’s type (`object {a, b}`)', () => {
    const page = renderApiReference();
    const rowFields = [...page.matchAll(/^\| `(?:spec|status)\.([^`]+)`/gm)].map((m) => (m[1] as string).split('.').pop()?.replace(/\[\]$/, ''));
    const inlined = [...page.matchAll(/object \{([^}]+)\}/g)].flatMap((m) => (m[1] as string).split(', '));
    const named = new Set([...rowFields, ...inlined]);
    const { spec, status } = swarmSchema.properties as Record<string, SchemaNode>;
    const fields = [...propertyNames(spec as SchemaNode), ...propertyNames(status as SchemaNode)];
    expect(fields.filter((f) => !named.has(f))).toEqual([]);
  });
});
