// npm run release -- --registry R --version V [--out DIR] [--no-push] [--no-sbom]
//
// Cuts a release from this tree: the functions and worker images built from
// the Dockerfile exactly as the tests build them (test/image, buildah), and
// the dead-letter logger (Knative's event_display at the pinned eventing
// version); each written as an OCI layout with compressed layers (what a push
// sends), pushed with its digest preserved; then swarm-crds.yaml, swarm.yaml
// and samples.yaml naming every image R/name@sha256:…, an SBOM per image,
// release notes since the last recorded release, and (pushed) the release
// recorded in RELEASES.json. Dev tooling, not shipped: it drives the test
// tree's image build and Go tool cache.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { ensureBuilt, type ProgressFn } from '../test/controlplane/build.js';
import { eventDisplayImage } from '../test/harness/real-knative.js';
import { ensureImages, mb } from '../test/image/build.js';
import { run } from '../test/image/buildah.js';
import { CHART_DIR, chartFiles, HAND_WRITTEN, treeDefaults } from './chart/generate.js';
import { parseReleaseArgs, UsageError, type ReleaseOptions } from './release/args.js';
import { imagesOf, parseDocuments, renderKustomization } from './release/kustomize.js';
import { imageRefs, RELEASE_IMAGES, releaseManifests, yamlFile, type ReleaseImage } from './release/manifests.js';
import { releaseNotes, type Commit } from './release/notes.js';
import { writeCompressedLayout, type Layout } from './release/oci-layout.js';
import { pushLayout } from './release/push.js';
import { lastRelease, parseReleases, recordRelease, renderReleases } from './release/record.js';
import { appSbom, imageSbom, syftBinary } from './release/sbom.js';

const repo = resolve(import.meta.dirname, '..');
const RELEASES_FILE = join(repo, 'RELEASES.json');
const started = Date.now();
const progress: ProgressFn = (line) => process.stderr.write(`[release ${Math.round((Date.now() - started) / 1000)}s] ${line}\n`);

const git = (...args: string[]): string => execFileSync('git', args, { cwd: repo, encoding: 'utf8' }).trim();
const readTree = (path: string): string | undefined => {
  const full = join(repo, path);
  return existsSync(full) && statSync(full).isFile() ? readFileSync(full, 'utf8') : undefined;
};

/** The three images as OCI archives: two from the Dockerfile (cached by their inputs), event_display compiled from the pinned eventing module. */
async function buildArchives(scratch: string): Promise<Record<ReleaseImage, string>> {
  const images = await ensureImages(progress);
  await ensureBuilt(progress, ['knative']);
  progress("event-display: compiling Knative's event_display at the pinned eventing version (its module's packages are mostly compiled already) …");
  const ticker = setInterval(() => progress('event-display: still compiling'), 30_000);
  const eventDisplay = await eventDisplayImage(scratch, progress).finally(() => clearInterval(ticker));
  return { functions: images.functions.archive, worker: images.worker.archive, eventDisplay: eventDisplay.path };
}

const imageRef = (registry: string, image: ReleaseImage, digests: Record<ReleaseImage, string>): string => imageRefs(registry, digests)[image];

/** charts/swarm generated with the release's version, registry and digests, packaged by the project's helm as <out>/swarm-<version>.tgz. */
async function packageChart(options: ReleaseOptions, digests: Record<ReleaseImage, string>, out: string): Promise<void> {
  const chart = join(out, 'chart', 'swarm');
  const defaults = { ...treeDefaults(readTree), version: options.version, registry: options.registry, digests: { functions: digests.functions, eventDisplay: digests.eventDisplay } };
  for (const [path, text] of Object.entries(chartFiles(readTree, defaults))) {
    await mkdir(dirname(join(chart, path)), { recursive: true });
    await writeFile(join(chart, path), text);
  }
  for (const path of HAND_WRITTEN) {
    await mkdir(dirname(join(chart, path)), { recursive: true });
    await copyFile(join(repo, CHART_DIR, path), join(chart, path));
  }
  const helm = (await ensureBuilt(progress, ['helm'])).helm!;
  await run(helm, ['lint', '--strict', chart]);
  // The chart installs exactly the images swarm.yaml names.
  const rendered = imagesOf(parseDocuments(await run(helm, ['template', 'swarm', chart, '-n', 'swarm-system']), 'helm template'));
  const expected = [imageRef(options.registry, 'functions', digests), imageRef(options.registry, 'eventDisplay', digests)];
  if ([...new Set(rendered)].sort().join() !== expected.sort().join()) throw new Error(`the chart renders images ${[...new Set(rendered)].join(', ')}, not ${expected.join(', ')}`);
  await run(helm, ['package', chart, '--destination', out]);
  progress(`chart: ${join(out, `swarm-${options.version}.tgz`)}`);
}

async function cut(options: ReleaseOptions): Promise<void> {
  const out = resolve(options.out);
  const commit = git('rev-parse', 'HEAD');
  const modified = git('status', '--porcelain', '--untracked-files=no') !== '';
  if (modified && options.push) throw new Error('the tree has uncommitted changes: a pushed release is cut from a commit (commit, or use --no-push)');
  if (modified) progress(`the tree has uncommitted changes: this release is not exactly commit ${commit.slice(0, 12)}`);
  const releases = existsSync(RELEASES_FILE) ? parseReleases(readFileSync(RELEASES_FILE, 'utf8')) : { releases: [] };
  if (options.push) recordRelease(releases, { version: options.version, commit, date: '' }); // refuses a version cut before, before any work

  await rm(out, { recursive: true, force: true });
  await mkdir(join(out, 'images'), { recursive: true });
  const scratch = join(out, '.scratch');
  const archives = await buildArchives(scratch);
  const layouts = {} as Record<ReleaseImage, Layout>;
  for (const image of Object.keys(RELEASE_IMAGES) as ReleaseImage[]) {
    layouts[image] = await writeCompressedLayout(archives[image], join(out, 'images', RELEASE_IMAGES[image]), { version: options.version, revision: commit });
    progress(`${RELEASE_IMAGES[image]}: ${layouts[image].digest} (${mb(layouts[image].bytes)} compressed)`);
  }
  await rm(scratch, { recursive: true, force: true });
  const digests = Object.fromEntries(Object.entries(layouts).map(([k, l]) => [k, l.digest])) as Record<ReleaseImage, string>;
  const refs = imageRefs(options.registry, digests);

  const manifests = releaseManifests(renderKustomization('knative', readTree), renderKustomization('knative/samples', readTree), refs, options.version);
  const header = (what: string) => `Swarm v${options.version} (commit ${commit}): ${what}`;
  await writeFile(join(out, 'swarm-crds.yaml'), yamlFile(header('the Swarm CRD. Apply before swarm.yaml; `kubectl delete -f swarm.yaml` leaves it (and every Swarm) in place.'), manifests.crds));
  await writeFile(join(out, 'swarm.yaml'), yamlFile(header('the installation (kubectl apply --server-side -f swarm.yaml, after swarm-crds.yaml).'), manifests.install));
  await writeFile(join(out, 'samples.yaml'), yamlFile(header('the sample worker pool and its Swarm, in namespace swarm.'), manifests.samples));

  await packageChart(options, digests, out);

  if (options.sbom) {
    const syft = await syftBinary(progress);
    const sboms = join(out, 'sbom');
    await mkdir(sboms, { recursive: true });
    for (const image of Object.keys(RELEASE_IMAGES) as ReleaseImage[]) {
      progress(`SBOM of ${RELEASE_IMAGES[image]} (syft, CycloneDX)`);
      await imageSbom(syft, layouts[image].dir, RELEASE_IMAGES[image], sboms, progress);
    }
    await appSbom(syft, repo, sboms, progress);
  }

  const previous = lastRelease(releases);
  const log = git('log', '--format=%H %s', previous ? `${previous.commit}..${commit}` : commit);
  const commits: Commit[] = log ? log.split('\n').map((line) => ({ sha: line.slice(0, 40), subject: line.slice(41) })) : [];
  await writeFile(join(out, 'RELEASE-NOTES.md'), releaseNotes({ version: options.version, commit, previous, commits, images: refs }));

  if (options.push) {
    for (const image of Object.keys(RELEASE_IMAGES) as ReleaseImage[]) {
      await pushLayout(layouts[image].dir, `${options.registry}/${RELEASE_IMAGES[image]}`, options.version, layouts[image].digest, progress, { plainHttp: options.plainHttp });
    }
    const recorded = recordRelease(releases, { version: options.version, commit, date: new Date().toISOString().slice(0, 10), images: digests });
    await writeFile(RELEASES_FILE, renderReleases(recorded));
    progress(`recorded v${options.version} in RELEASES.json: commit it`);
  } else progress('--no-push: nothing pushed, nothing recorded');
  process.stdout.write(`release v${options.version} written to ${out}\n`);
}

try {
  await cut(parseReleaseArgs(process.argv.slice(2)));
} catch (error) {
  process.stderr.write(`release: ${(error as Error).message}\n`);
  process.exit(error instanceof UsageError ? 2 : 1);
}
