// The subset of kustomize that knative/ uses (resources, namespace, labels,
// images), in TypeScript, so the release and the chart generator render the
// tree without a kubectl binary (the unit tier has none; the chart's freshness
// test runs there). Anything else in a kustomization.yaml is refused rather
// than ignored. test/integration/release-kustomize.test.ts checks that it
// renders what `kubectl kustomize` renders.
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';

export type Doc = Record<string, unknown> & { apiVersion?: string; kind?: string; metadata?: Record<string, unknown> & { name?: string; namespace?: string; labels?: Record<string, string> } };

/** Reads a file of the tree (a path under the root); undefined when there is none. */
export type ReadFile = (path: string) => string | undefined;

/**
 * Kinds kustomize treats as cluster-scoped among those this project uses (its
 * namespace transformer leaves them alone). Not ValidatingAdmissionPolicy and
 * its binding: kustomize does not know them and sets their namespace, which
 * the API server ignores for a cluster-scoped kind.
 */
export const CLUSTER_SCOPED = new Set([
  'Namespace',
  'ClusterRole',
  'ClusterRoleBinding',
  'CustomResourceDefinition',
  'MutatingWebhookConfiguration',
  'ValidatingWebhookConfiguration',
  'PriorityClass',
]);

interface Kustomization {
  resources?: string[];
  namespace?: string;
  labels?: { pairs: Record<string, string>; includeSelectors?: boolean; includeTemplates?: boolean }[];
  images?: { name: string; newName?: string; newTag?: string; digest?: string }[];
}

const SUPPORTED = new Set(['apiVersion', 'kind', 'resources', 'namespace', 'labels', 'images']);

export function parseDocuments(text: string, where: string): Doc[] {
  return parseAllDocuments(text)
    .map((doc) => {
      if (doc.errors.length > 0) throw new Error(`${where}: ${doc.errors[0]!.message}`);
      return doc.toJS() as Doc | null;
    })
    .filter((doc): doc is Doc => doc !== null && typeof doc === 'object');
}

/** The documents `kubectl kustomize <dir>` prints (dir relative to the tree's root), in resource order. */
export function renderKustomization(dir: string, read: ReadFile): Doc[] {
  const path = join(dir, 'kustomization.yaml');
  const text = read(path);
  if (text === undefined) throw new Error(`${path}: not found`);
  const k = (parse(text) ?? {}) as Kustomization;
  const unknown = Object.keys(k).filter((key) => !SUPPORTED.has(key));
  if (unknown.length) throw new Error(`${path}: ${unknown.join(', ')} not supported by the release's renderer (dev/release/kustomize.ts)`);
  let docs: Doc[] = [];
  for (const resource of k.resources ?? []) {
    const at = join(dir, resource);
    const file = read(at);
    docs.push(...(file !== undefined && at.endsWith('.yaml') ? parseDocuments(file, at) : renderKustomization(at, read)));
  }
  for (const label of k.labels ?? []) {
    if (label.includeSelectors || label.includeTemplates) throw new Error(`${path}: labels with includeSelectors/includeTemplates are not supported`);
    docs = docs.map((d) => ({ ...d, metadata: { ...d.metadata, labels: { ...d.metadata?.labels, ...label.pairs } } }));
  }
  if (k.namespace) {
    const ns = k.namespace;
    docs = docs.map((d) => (CLUSTER_SCOPED.has(d.kind ?? '') ? d : { ...d, metadata: { ...d.metadata, namespace: ns } }));
    // A binding's ServiceAccount subject that names no namespace gets this one; one that names its own keeps it.
    docs = docs.map((d) =>
      (d.kind === 'RoleBinding' || d.kind === 'ClusterRoleBinding') && Array.isArray(d.subjects)
        ? { ...d, subjects: (d.subjects as Record<string, unknown>[]).map((s) => (s.kind === 'ServiceAccount' && !s.namespace ? { ...s, namespace: ns } : s)) }
        : d,
    );
  }
  for (const image of k.images ?? []) docs = docs.map((d) => replaceImages(d, (ref) => retag(ref, image)) as Doc);
  return docs;
}

/** `name[:tag][@digest]` → its parts. */
export function splitImage(ref: string): { name: string; tag?: string; digest?: string } {
  const [withTag, digest] = ref.split('@') as [string, string | undefined];
  const slash = withTag.lastIndexOf('/');
  const colon = withTag.lastIndexOf(':');
  const name = colon > slash ? withTag.slice(0, colon) : withTag;
  const tag = colon > slash ? withTag.slice(colon + 1) : undefined;
  return { name, ...(tag ? { tag } : {}), ...(digest ? { digest } : {}) };
}

function retag(ref: string, image: NonNullable<Kustomization['images']>[number]): string {
  const parts = splitImage(ref);
  if (parts.name !== image.name) return ref;
  const name = image.newName ?? parts.name;
  if (image.digest) return `${name}@${image.digest}`;
  const tag = image.newTag ?? parts.tag;
  return `${name}${tag ? `:${tag}` : ''}${parts.digest ? `@${parts.digest}` : ''}`;
}

/** Applies `map` to the image of every container and init container, wherever a pod template appears. */
export function replaceImages(node: unknown, map: (ref: string) => string): unknown {
  if (Array.isArray(node)) return node.map((n) => replaceImages(n, map));
  if (node === null || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      out[key] = value.map((c: Record<string, unknown>) => (typeof c.image === 'string' ? { ...c, image: map(c.image) } : c));
    } else out[key] = replaceImages(value, map);
  }
  return out;
}

/** Every container image named anywhere in `docs`. */
export function imagesOf(docs: readonly Doc[]): string[] {
  const found: string[] = [];
  replaceImages(docs, (ref) => {
    found.push(ref);
    return ref;
  });
  return found;
}
