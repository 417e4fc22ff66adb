import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { renderSwarmCrd } from '../../lib/api/crd.js';
import { KUBERNETES_KEYWORDS, LIMITS, SPEC_RULES, swarmSchema } from '../../lib/api/schema.js';
import type { SchemaNode } from '../../lib/api/schema.js';
import { toStructural } from '../../lib/api/structural.js';
import { validateSwarm } from '../../lib/api/validate.js';

/** No control characters: what the schema allows in a job name. */
const printable = (s: string): boolean => [...s].every((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f);

const crdPath = new URL('../../knative/base/swarm-crd.yaml', import.meta.url);
const openAPIV3Schema = (): SchemaNode =>
  ((parse(renderSwarmCrd()) as { spec: unknown }).spec as { versions: Array<{ schema: { openAPIV3Schema: SchemaNode } }> }).versions[0]!.schema.openAPIV3Schema;

/** Every schema node below `node`, with its path. */
function* nodes(node: SchemaNode, path = ''): Generator<[string, SchemaNode, 'root' | 'field' | 'item']> {
  yield [path, node, path === '' ? 'root' : path.endsWith('.items') ? 'item' : 'field'];
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, SchemaNode>)) yield* nodes(child, `${path}.${name}`);
  if (node.items) yield* nodes(node.items as SchemaNode, `${path}.items`);
}

describe('the committed CRD', () => {
  it('is exactly what the generator writes (never edited by hand)', () => {
    expect(readFileSync(crdPath, 'utf8')).toBe(renderSwarmCrd());
  });

  it('names the resource as the issue says', () => {
    const crd = parse(readFileSync(crdPath, 'utf8'));
    expect(crd.metadata.name).toBe('swarms.k8slab.info');
    expect(crd.spec.names).toMatchObject({ kind: 'Swarm', plural: 'swarms', shortNames: ['swm'] });
    expect(crd.spec.scope).toBe('Namespaced');
    // scale: `kubectl scale swm`, HPA and KEDA set spec.replicas and read the observed count and selector.
    expect(crd.spec.versions[0].subresources).toEqual({
      status: {},
      scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas', labelSelectorPath: '.status.selector' },
    });
    expect(crd.spec.versions[0].additionalPrinterColumns.map((c: { name: string }) => c.name)).toEqual(
      expect.arrayContaining(['StatefulSet', 'Replicas', 'Ready', 'Version', 'Phase', 'Age']),
    );
  });

  it('makes statefulSetName and configMapName immutable (CEL self == oldSelf, with a message saying so)', () => {
    const spec = parse(readFileSync(crdPath, 'utf8')).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties;
    for (const field of ['statefulSetName', 'configMapName']) {
      expect(spec[field]['x-kubernetes-validations']).toEqual([{ rule: 'self == oldSelf', message: expect.stringMatching(new RegExp(`^${field} is immutable`)) }]);
    }
  });

  it('makes restart.handoff immutable: a switch mid hand-off keeps neither promise (docs/design.md)', () => {
    const handoff = parse(readFileSync(crdPath, 'utf8')).spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.restart.properties.handoff;
    expect(handoff['x-kubernetes-validations']).toEqual([{ rule: 'self == oldSelf', message: expect.stringMatching(/^restart\.handoff is immutable/) }]);
  });
});

describe('the CRD schema is structural', () => {
  const schema = openAPIV3Schema();

  it('types every node, except nodes that preserve unknown fields', () => {
    const untyped = [...nodes(schema)].filter(([, n]) => n.type === undefined && n['x-kubernetes-preserve-unknown-fields'] !== true);
    expect(untyped.map(([p]) => p)).toEqual([]);
  });

  it('has no logical junctors left, and no additionalProperties beside properties', () => {
    for (const [path, node] of nodes(schema)) {
      for (const junctor of ['anyOf', 'oneOf', 'allOf', 'not']) expect(node[junctor], `${path}.${junctor}`).toBeUndefined();
      if (node.properties) expect(node.additionalProperties, `${path}.additionalProperties`).toBeUndefined();
    }
  });

  it('leaves metadata to the apiserver', () => {
    expect((schema.properties as Record<string, SchemaNode>).metadata).toEqual({ type: 'object' });
  });

  it('puts no CEL rule on an untyped node (the apiserver cannot type-check it)', () => {
    for (const [path, node] of nodes(schema)) {
      if (node.type === undefined) expect(node['x-kubernetes-validations'], path).toBeUndefined();
    }
  });

  it('bounds every array and string in spec (CEL cost estimation needs maxItems/maxLength)', () => {
    const spec = (schema.properties as Record<string, SchemaNode>).spec!;
    for (const [path, node] of nodes(spec, 'spec')) {
      if (node.type === 'array') expect(node.maxItems, path).toBeTypeOf('number');
      if (node.type === 'string' && !node.enum) expect(node.maxLength, path).toBeTypeOf('number');
    }
  });

  it('keeps the job limits in the CRD', () => {
    const spec = (schema.properties as Record<string, SchemaNode>).spec!;
    const jobs = ((spec.properties as Record<string, SchemaNode>).workload!.properties as Record<string, SchemaNode>).jobs!;
    expect(jobs.maxItems).toBe(LIMITS.maxJobs);
    const job = jobs.items as SchemaNode;
    expect(job).toMatchObject({ 'x-kubernetes-preserve-unknown-fields': true, maxLength: LIMITS.jobNameMaxLength, required: ['name'] });
    expect((job.properties as Record<string, SchemaNode>).weight).toMatchObject({ minimum: 1, maximum: 1000 });
    expect(jobs.uniqueItems).toBeUndefined(); // duplicates are the function's to report (InvalidSpec)
  });
});

describe('toStructural', () => {
  it('merges a union of differently typed branches into one untyped node', () => {
    const union = { anyOf: [{ type: 'string', maxLength: 3 }, { type: 'object', required: ['a'], additionalProperties: false, properties: { a: { type: 'string' } } }] };
    expect(toStructural({ type: 'object', properties: { u: union } })).toEqual({
      type: 'object',
      properties: { u: { 'x-kubernetes-preserve-unknown-fields': true, maxLength: 3, required: ['a'], properties: { a: { type: 'string' } } } },
    });
  });

  it.each([
    ['a keyword OpenAPI v3.0 lacks', { type: 'object', properties: { a: { type: 'string', const: 'x' } } }, /const/],
    ['an untyped node', { type: 'object', properties: { a: { description: 'no type' } } }, /needs a type/],
    ['a junctor that is not a typed union', { type: 'object', properties: { a: { type: 'string', anyOf: [{ maxLength: 1 }] } } }, /anyOf/],
    ['a keyword in two branches', { anyOf: [{ type: 'string', maxLength: 1 }, { type: 'array', maxLength: 2, items: { type: 'string' } }] }, /two union branches|cannot be kept/],
    ['enum in a union branch (the apiserver applies it to every type)', { anyOf: [{ type: 'string', enum: ['a'] }, { type: 'object' }] }, /enum/],
  ])('refuses %s', (_what, schema, problem) => {
    expect(() => toStructural(schema)).toThrow(expect.objectContaining({ name: 'NotStructuralError' }));
    expect(() => toStructural(schema)).toThrow(problem);
  });
});

describe('the CRD accepts every Swarm the function accepts', () => {
  // The apiserver's view, approximated with ajv over the generated schema: where the
  // transformation loses nothing, both sides must agree.
  const crdAjv = new Ajv({ allErrors: true, strict: false, keywords: [...KUBERNETES_KEYWORDS] });
  const crdCheck = crdAjv.compile(toStructural(swarmSchema));

  const jobName = fc.string({ minLength: 1, maxLength: 20 }).filter(printable);
  const job = fc.oneof(
    jobName,
    fc.record({ name: jobName, weight: fc.integer({ min: -5, max: 1200 }), dedicated: fc.boolean() }, { requiredKeys: ['name'] }),
  );
  const swarm = fc.record({
    jobs: fc.array(job, { maxLength: 30 }),
    maxUnavailable: fc.integer({ min: -1, max: 5 }),
    policy: fc.constantFrom('Restart', 'None', 'Sometimes'),
    handoff: fc.constantFrom('MakeBeforeBreak', 'BreakBeforeMake'),
  });
  // Checked by CEL in the API server, which ajv does not evaluate.
  const celOnly = (problems: readonly string[]) => problems.every((p) => p === `spec: ${SPEC_RULES.restartBreaksFirst.message}`);

  it('agrees on limits (weights, maxUnavailable, enums) and never rejects what validateSwarm accepts', () => {
    fc.assert(
      fc.property(swarm, ({ jobs, maxUnavailable, policy, handoff }) => {
        const obj = {
          apiVersion: 'k8slab.info/v1alpha1',
          kind: 'Swarm',
          metadata: { name: 's', namespace: 'n' },
          spec: { statefulSetName: 'w', configMapName: 'c', workload: { jobs }, restart: { policy, handoff, maxUnavailable } },
        };
        const viaFunction = validateSwarm(obj);
        const names = jobs.map((j) => (typeof j === 'string' ? j : j.name));
        const hasDuplicates = new Set(names).size !== names.length;
        if (viaFunction.ok) expect(crdCheck(structuredClone(obj))).toBe(true);
        else if (!hasDuplicates && !celOnly(viaFunction.problems)) expect(crdCheck(structuredClone(obj))).toBe(false);
      }),
    );
  });
});
