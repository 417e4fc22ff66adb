// What a release ships as YAML, from the rendered knative/ tree and the
// images' digests: swarm-crds.yaml (the CRD alone, so `kubectl delete -f
// swarm.yaml` never deletes it and with it every Swarm), swarm.yaml (the
// installation, every image as registry/name@sha256:…) and samples.yaml (the
// seed's worker pool and Swarm). Pure: no files, no registry.
import { stringify } from 'yaml';
import { type Doc, imagesOf, replaceImages, splitImage } from './kustomize.js';

/** The images a release builds and pushes, by the name they get under the registry. */
export const RELEASE_IMAGES = {
  functions: 'swarm',
  worker: 'swarm-worker',
  eventDisplay: 'event-display',
} as const;
export type ReleaseImage = keyof typeof RELEASE_IMAGES;

/** Which image of the tree each release image replaces, by the last path segment of its repository. */
const REPLACES: Record<string, ReleaseImage> = { swarm: 'functions', 'swarm-worker': 'worker', event_display: 'eventDisplay' };

export type Digests = Readonly<Record<ReleaseImage, string>>;

/** `registry/name@sha256:…` of each release image. */
export function imageRefs(registry: string, digests: Digests): Record<ReleaseImage, string> {
  const base = registry.replace(/\/+$/, '');
  return Object.fromEntries(
    (Object.keys(RELEASE_IMAGES) as ReleaseImage[]).map((image) => {
      if (!/^sha256:[0-9a-f]{64}$/.test(digests[image])) throw new Error(`${image}: not a sha256 digest: ${digests[image]}`);
      return [image, `${base}/${RELEASE_IMAGES[image]}@${digests[image]}`];
    }),
  ) as Record<ReleaseImage, string>;
}

/** Replaces every image of ours (and the dead-letter logger's) with its release reference; any other image is an error. */
export function pinImages(docs: readonly Doc[], refs: Readonly<Record<ReleaseImage, string>>): Doc[] {
  return docs.map(
    (doc) =>
      replaceImages(doc, (ref) => {
        const last = splitImage(ref).name.split('/').pop() ?? '';
        const image = REPLACES[last];
        if (!image) throw new Error(`${doc.kind}/${doc.metadata?.name}: image ${ref} is not one the release builds`);
        return refs[image];
      }) as Doc,
  );
}

export const VERSION_LABEL = 'app.kubernetes.io/version';

/** Labels every object (not pod templates: a version label there would restart every pod of an unchanged image). */
function labelVersion(docs: readonly Doc[], version: string): Doc[] {
  return docs.map((d) => ({ ...d, metadata: { ...d.metadata, labels: { ...d.metadata?.labels, [VERSION_LABEL]: version } } }));
}

export const isCrd = (doc: Doc): boolean => doc.kind === 'CustomResourceDefinition';

export interface ReleaseManifests {
  readonly crds: Doc[];
  readonly install: Doc[];
  readonly samples: Doc[];
}

/**
 * The release's documents: `installation` is knative/ rendered, `samples`
 * knative/samples rendered. Fails when an image would be left unpinned.
 */
export function releaseManifests(installation: readonly Doc[], samples: readonly Doc[], refs: Readonly<Record<ReleaseImage, string>>, version: string): ReleaseManifests {
  const crds = labelVersion(installation.filter(isCrd), version);
  if (crds.length === 0) throw new Error('the installation holds no CustomResourceDefinition');
  const install = labelVersion(pinImages(installation.filter((d) => !isCrd(d)), refs), version);
  const pinnedSamples = labelVersion(pinImages(samples.filter((d) => !isCrd(d)), refs), version);
  for (const ref of [...imagesOf(install), ...imagesOf(pinnedSamples)]) {
    if (!splitImage(ref).digest) throw new Error(`image ${ref} is not pinned by digest`);
  }
  return { crds, install, samples: pinnedSamples };
}

/** A multi-document YAML file with a header comment. */
export function yamlFile(header: string, docs: readonly Doc[]): string {
  const comment = header
    .trim()
    .split('\n')
    .map((line) => `# ${line}`.trimEnd())
    .join('\n');
  return `${comment}\n${docs.map((d) => `---\n${stringify(d, { lineWidth: 0 })}`).join('')}`;
}
