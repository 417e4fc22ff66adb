// The release's YAML shape (dev/release/manifests.ts over knative/ as the
// release renders it): the CRD only in swarm-crds.yaml, every image of
// swarm.yaml and samples.yaml by digest under the release's registry, and
// what a platform team installs all there.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { imagesOf, renderKustomization, type Doc } from '../../dev/release/kustomize.js';
import { imageRefs, pinImages, releaseManifests, VERSION_LABEL, yamlFile } from '../../dev/release/manifests.js';

const repo = resolve(import.meta.dirname, '../..');
const read = (path: string): string | undefined => {
  const full = join(repo, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
};
const digest = (c: string): string => `sha256:${c.repeat(64)}`;
const refs = imageRefs('registry.example.com/swarm', { functions: digest('a'), worker: digest('b'), eventDisplay: digest('c') });
const release = releaseManifests(renderKustomization('knative', read), renderKustomization('knative/samples', read), refs, '0.0.0-test');
/** What a file holds once written and read back, as `kubectl apply -f` reads it. */
const reread = (docs: Doc[]): Doc[] => parseAllDocuments(yamlFile('header\nline two', docs)).map((d) => d.toJS() as Doc);
const kinds = (docs: Doc[]): string[] => [...new Set(docs.map((d) => d.kind!))].sort();

describe('release YAML', () => {
  const crds = reread(release.crds);
  const install = reread(release.install);
  const samples = reread(release.samples);

  it('swarm-crds.yaml holds the Swarm CRD and nothing else; swarm.yaml and samples.yaml hold no CRD', () => {
    expect(crds.map((d) => `${d.kind}/${d.metadata?.name}`)).toEqual(['CustomResourceDefinition/swarms.k8slab.info']);
    expect(install.filter((d) => d.kind === 'CustomResourceDefinition')).toEqual([]);
    expect(samples.filter((d) => d.kind === 'CustomResourceDefinition')).toEqual([]);
  });

  it('swarm.yaml holds the ServiceAccounts, RBAC, Knative Services, Broker, Triggers, ApiServerSource and PingSource', () => {
    expect(kinds(install)).toEqual(
      ['ApiServerSource', 'Broker', 'ClusterRole', 'Namespace', 'PingSource', 'Service', 'ServiceAccount', 'Trigger', 'ValidatingAdmissionPolicy', 'ValidatingAdmissionPolicyBinding'].sort(),
    );
    const named = (kind: string) => install.filter((d) => d.kind === kind).map((d) => d.metadata?.name).sort();
    expect(named('ServiceAccount')).toEqual(['swarm-assign', 'swarm-dead-letter', 'swarm-restart', 'swarm-source']);
    expect(named('Trigger')).toEqual(['swarm-assign', 'swarm-restart']);
    expect(named('Service')).toEqual(['swarm-assign', 'swarm-dead-letter', 'swarm-restart']);
    for (const d of install) if (d.kind !== 'Namespace' && !d.kind!.startsWith('Cluster') && !d.kind!.startsWith('Validating')) expect(d.metadata?.namespace).toBe('swarm-system');
  });

  it('every image, in swarm.yaml and samples.yaml, is registry/name@sha256 of the release', () => {
    const images = [...imagesOf(install), ...imagesOf(samples)];
    expect(images.length).toBeGreaterThanOrEqual(4);
    for (const image of images) expect(image).toMatch(/^registry\.example\.com\/swarm\/(swarm|swarm-worker|event-display)@sha256:[0-9a-f]{64}$/);
    expect(new Set(images)).toEqual(new Set([refs.functions, refs.eventDisplay, refs.worker]));
  });

  it('every object carries the release version; pod templates do not (an unchanged image is not restarted)', () => {
    for (const d of [...crds, ...install, ...samples]) expect(d.metadata?.labels?.[VERSION_LABEL]).toBe('0.0.0-test');
    const text = yamlFile('h', release.samples);
    expect(text.match(new RegExp(VERSION_LABEL, 'g'))?.length).toBe(samples.length);
  });

  it('an image the release does not build is refused, not shipped by tag', () => {
    const foreign: Doc = { kind: 'Deployment', metadata: { name: 'x' }, spec: { template: { spec: { containers: [{ name: 'c', image: 'nginx:1' }] } } } };
    expect(() => pinImages([foreign], refs)).toThrow(/nginx:1 is not one the release builds/);
  });

  it('a digest that is not sha256 is refused', () => {
    expect(() => imageRefs('r.example/x', { functions: 'latest', worker: digest('b'), eventDisplay: digest('c') })).toThrow(/not a sha256 digest/);
  });
});

describe('the release renderer (a kustomize subset)', () => {
  it('refuses what it does not implement (knative/overlays/dev has patches)', () => {
    expect(() => renderKustomization('knative/overlays/dev', read)).toThrow(/patches not supported/);
  });

  it('samples: namespace swarm on every namespaced object, the RoleBindings keep their subjects in swarm-system', () => {
    const docs = renderKustomization('knative/samples', read);
    for (const d of docs) if (d.kind !== 'Namespace') expect(d.metadata?.namespace).toBe('swarm');
    const bindings = docs.filter((d) => d.kind === 'RoleBinding' && d.metadata?.name !== 'swarm-worker');
    expect(bindings).toHaveLength(3);
    for (const b of bindings) expect((b.subjects as { namespace: string }[])[0]!.namespace).toBe('swarm-system');
  });
});
