// JSON Schema (as ajv reads it) → a Kubernetes *structural* openAPIV3Schema.
// A pure, mechanical transformation, so the CRD can never drift from validation:
//  - `additionalProperties: false` is dropped: the apiserver forbids it beside
//    `properties` and prunes unknown fields instead;
//  - at the root, `metadata` becomes `{type: object}`: ObjectMeta is the apiserver's;
//  - a union of differently typed branches (`anyOf: [{type: string…}, {type: object…}]`)
//    cannot carry `type` in a structural schema, and CEL rules cannot be attached to an
//    untyped node (the apiserver has no CEL type for it). It becomes an untyped node with
//    `x-kubernetes-preserve-unknown-fields: true` holding the branches' type-specific
//    keywords side by side. That is sound because the apiserver, like JSON Schema,
//    applies string keywords only to strings and object keywords only to objects; what
//    is lost (rejecting a number or a list) is caught by ajv in the function.
import type { SchemaNode } from './schema.js';

/** Keywords that constrain only values of one JSON type; safe to merge across union branches. */
const TYPE_SPECIFIC: Record<string, readonly string[]> = {
  // Not enum or format: the apiserver checks those against values of every type.
  string: ['minLength', 'maxLength', 'pattern'],
  object: ['properties', 'required', 'minProperties', 'maxProperties'],
  integer: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  number: ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'],
  array: ['items', 'minItems', 'maxItems'],
  boolean: [],
};

/** Draft-07 keywords with no OpenAPI v3.0 / apiextensions counterpart. */
const JSON_SCHEMA_ONLY = ['$schema', '$id', '$comment', 'const', 'examples', 'if', 'then', 'else'];

class NotStructuralError extends Error {
  constructor(path: string, problem: string) {
    super(`${path || '<root>'}: ${problem}`);
    this.name = 'NotStructuralError';
  }
}

export function toStructural(schema: SchemaNode): SchemaNode {
  return transform(schema, '', true);
}

function transform(node: SchemaNode, path: string, isRoot: boolean): SchemaNode {
  if (isTypedUnion(node)) return mergeUnion(node, path);
  const out: SchemaNode = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (JSON_SCHEMA_ONLY.includes(keyword)) {
      throw new NotStructuralError(path, `keyword "${keyword}" has no OpenAPI v3.0 equivalent`);
    }
    if (keyword === 'additionalProperties' && value === false) continue;
    if (keyword === 'properties') out.properties = transformProperties(value as Record<string, SchemaNode>, path, isRoot);
    else if (keyword === 'items') out.items = transform(value as SchemaNode, `${path}.items`, false);
    else if (keyword === 'anyOf' || keyword === 'oneOf' || keyword === 'allOf' || keyword === 'not') {
      throw new NotStructuralError(path, `"${keyword}" is only supported as a union of differently typed branches`);
    } else out[keyword] = value;
  }
  if (out.type === undefined && out['x-kubernetes-preserve-unknown-fields'] !== true) {
    throw new NotStructuralError(path, 'every node needs a type');
  }
  return out;
}

function transformProperties(properties: Record<string, SchemaNode>, path: string, isRoot: boolean): Record<string, SchemaNode> {
  const out: Record<string, SchemaNode> = {};
  for (const [name, child] of Object.entries(properties)) {
    out[name] = isRoot && name === 'metadata' ? { type: 'object' } : transform(child, `${path}.${name}`, false);
  }
  return out;
}

function isTypedUnion(node: SchemaNode): boolean {
  const branches = node.anyOf ?? node.oneOf;
  if (!Array.isArray(branches) || node.type !== undefined) return false;
  const types = branches.map((b: SchemaNode) => b.type);
  return types.every((t) => typeof t === 'string') && new Set(types).size === types.length;
}

function mergeUnion(node: SchemaNode, path: string): SchemaNode {
  const branches = (node.anyOf ?? node.oneOf) as SchemaNode[];
  const out: SchemaNode = {};
  if (node.description !== undefined) out.description = node.description;
  out['x-kubernetes-preserve-unknown-fields'] = true;
  for (const branch of branches) {
    const type = branch.type as string;
    const allowed = TYPE_SPECIFIC[type];
    if (!allowed) throw new NotStructuralError(path, `union branch of unsupported type "${type}"`);
    const typed = transform(branch, path, false);
    for (const [keyword, value] of Object.entries(typed)) {
      if (keyword === 'type' || keyword === 'description' || keyword === 'default') continue;
      if (!allowed.includes(keyword)) {
        throw new NotStructuralError(path, `keyword "${keyword}" of the ${type} branch cannot be kept in an untyped node`);
      }
      if (keyword in out) throw new NotStructuralError(path, `keyword "${keyword}" appears in two union branches`);
      out[keyword] = value;
    }
  }
  return out;
}
