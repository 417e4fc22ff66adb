// Knative Serving and Eventing, Traefik and an OpenTelemetry collector as
// container images, built from their pinned Go modules without a registry:
// - a base image made here (CA certificates from the host's Debian
//   ca-certificates, /etc/passwd with the nonroot user 65532, /tmp), put in
//   ko's own base-image cache (KOCACHE/img, an OCI layout) and named by
//   digest, so ko never asks a registry for it;
// - Knative: `ko resolve` of the module's own config/ directories, as its
//   hack/generate-yamls.sh does for a release, publishing into an OCI layout
//   (--push=false); every image is then cut out of that layout into its own
//   OCI archive named `swarm.local/knative/<serving|eventing>/<cmd>:<version>`,
//   and the manifests' ko references are rewritten to those names;
// - Traefik (cmd/traefik, built in its own module tree: its go.mod has
//   replace directives) and otelcol (the collector builder, ocb, with the
//   OTLP receiver and debug, OTLP and OTLP/HTTP exporters) as single-layer images on
//   the same base files.
// Everything is cached under cacheRoot(), one directory per module keyed by
// module, version, Go version and flags; a complete directory is reused as is.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { cp, mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import type { ProgressFn } from './build.js';
import { acquireLock, cacheRoot, chmodTree, goVersion, stderrProgress } from './build.js';
import type { ImageArchive } from './images.js';
import type { ImageConfig, TarEntry } from './oci.js';
import { ociArchive, tar } from './oci.js';

const here = dirname(fileURLToPath(import.meta.url));

/** Bumped when the way these images or manifests are assembled changes. */
export const KNATIVE_IMAGES_REVISION = 1;

/** The pins this file reads from versions.json. */
export interface ImagePins {
  readonly knativeServing: string;
  readonly knativeEventing: string;
  readonly ko: string;
  readonly traefik: string;
  readonly otelcol: string;
  readonly goBuildFlags: readonly string[];
  readonly goLdflags: string;
}

export function readImagePins(): ImagePins {
  return JSON.parse(readFileSync(join(here, 'versions.json'), 'utf8')) as ImagePins;
}

/** Where the images live in containerd, and what the manifests name. */
export const IMAGE_REGISTRY = 'swarm.local';
/** The repository ko publishes under; only ever seen in ko's output, rewritten before anything is written. */
export const KO_REPO = 'ko.invalid/swarm';

/** One release YAML of a Knative module: `ko resolve <args>` run in the module's root. */
export interface KnativeManifest {
  readonly file: string;
  readonly args: readonly string[];
}

export interface KnativeModule {
  readonly id: 'knative-serving' | 'knative-eventing';
  readonly module: string;
  readonly version: string;
  /** Image names: `swarm.local/knative/<component>/<path under cmd/>:<version>`. */
  readonly component: 'serving' | 'eventing';
  readonly manifests: readonly KnativeManifest[];
  /**
   * Files that are symlinks into vendor/ in the git repository: a module zip
   * holds no symlinks, so they are copied from the dependency module (at the
   * version the module's go.mod requires) before `ko resolve`.
   */
  readonly links: readonly VendoredLink[];
}

export interface VendoredLink {
  readonly path: string;
  /** The module holding the target; absent: the module itself (a link within the repository). */
  readonly module?: string;
  readonly file: string;
}

/**
 * The release YAMLs, as the modules' hack/generate-yamls.sh make them:
 * serving-crds.yaml and serving-core.yaml; eventing-crds.yaml,
 * eventing-core.yaml, in-memory-channel.yaml and mt-channel-broker.yaml.
 */
export function knativeModules(pins: ImagePins): KnativeModule[] {
  return [
    {
      id: 'knative-serving',
      module: 'knative.dev/serving',
      version: pins.knativeServing,
      component: 'serving',
      manifests: [
        { file: 'serving-crds.yaml', args: ['-f', 'config/core/300-resources/', '-f', 'config/core/300-imagecache.yaml'] },
        { file: 'serving-core.yaml', args: ['-R', '-f', 'config/core/'] },
      ],
      links: [
        { path: 'config/core/300-imagecache.yaml', module: 'knative.dev/caching', file: 'config/image.yaml' },
        ...['certificate', 'domain-claim', 'ingress', 'serverlessservice'].map((name) => ({
          path: `config/core/300-resources/${name}.yaml`,
          module: 'knative.dev/networking',
          file: `config/${name}.yaml`,
        })),
        { path: 'config/core/configmaps/network.yaml', module: 'knative.dev/networking', file: 'config/config-network.yaml' },
      ],
    },
    {
      id: 'knative-eventing',
      module: 'knative.dev/eventing',
      version: pins.knativeEventing,
      component: 'eventing',
      manifests: [
        { file: 'eventing-crds.yaml', args: ['-f', 'config/core/resources/'] },
        { file: 'eventing-core.yaml', args: ['-R', '-f', 'config/core/'] },
        { file: 'in-memory-channel.yaml', args: ['-R', '-f', 'config/channels/in-memory-channel/'] },
        // The release script reads config/brokers/mt-channel-broker/ without -R: its top-level files are
        // symlinks into deployments/ and roles/, which a module zip drops; -R reads their targets.
        { file: 'mt-channel-broker.yaml', args: ['-R', '-f', 'config/brokers/mt-channel-broker/'] },
      ],
      // Without them eventing-controller fails: configmap "eventing-transformations-images" not found.
      links: ['eventing-integrations-images', 'eventing-transformations-images'].map((name) => ({
        path: `config/core/configmaps/${name}.yaml`,
        file: `third_party/eventing-integrations-latest/${name}.yaml`,
      })),
    },
  ];
}

/**
 * The collector's components (all at the pinned otelcol version). No file
 * exporter: the contrib fileexporter's tests import
 * extension/encoding/otlpencodingextension, which the proxy refuses (403) at
 * every version tried, and the builder's `go mod tidy` loads those tests.
 */
export function otelcolBuilderConfig(pins: ImagePins, outputPath: string): string {
  const v = pins.otelcol;
  const core = 'go.opentelemetry.io/collector';
  return [
    'dist:',
    '  name: otelcol',
    '  module: swarm.local/otelcol',
    '  description: OpenTelemetry collector for the Swarm local cluster',
    `  output_path: ${outputPath}`,
    `  version: ${v.replace(/^v/, '')}`,
    'receivers:',
    `  - gomod: ${core}/receiver/otlpreceiver ${v}`,
    'processors:',
    `  - gomod: ${core}/processor/batchprocessor ${v}`,
    `  - gomod: ${core}/processor/memorylimiterprocessor ${v}`,
    'exporters:',
    `  - gomod: ${core}/exporter/debugexporter ${v}`,
    `  - gomod: ${core}/exporter/otlpexporter ${v}`,
    `  - gomod: ${core}/exporter/otlphttpexporter ${v}`,
    '',
  ].join('\n');
}

/** A cache directory name: `<id>-<version>-<hash of everything the build depends on>`. */
export function imageCacheKey(id: string, version: string, inputs: Readonly<Record<string, unknown>>): string {
  const canonical = JSON.stringify({ revision: KNATIVE_IMAGES_REVISION, id, version, ...sortKeys(inputs) });
  return `${id}-${version}-${createHash('sha256').update(canonical).digest('hex').slice(0, 12)}`;
}

function sortKeys(value: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(Object.keys(value).sort().map((k) => [k, value[k]]));
}

/** The version `goMod` requires of `module` (a require line, in a block or not). */
export function requiredVersion(goMod: string, module: string): string {
  const escaped = module.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const match = goMod.match(new RegExp(`^\\s*(?:require\\s+)?${escaped}\\s+(v\\S+)`, 'm'));
  if (!match) throw new Error(`go.mod requires no ${module}`);
  return match[1]!;
}

/** `swarm.local/knative/eventing/broker/filter:v0.47.0` for knative.dev/eventing/cmd/broker/filter. */
export function knativeImageName(mod: Pick<KnativeModule, 'module' | 'component' | 'version'>, importPath: string): string {
  const prefix = `${mod.module}/cmd/`;
  if (!importPath.startsWith(prefix)) throw new Error(`${importPath} is not a command of ${mod.module}`);
  return `${IMAGE_REGISTRY}/knative/${mod.component}/${importPath.slice(prefix.length)}:${mod.version}`;
}

export interface ResolvedImage {
  readonly importPath: string;
  /** The manifest digest ko published (in its OCI layout). */
  readonly digest: string;
  readonly name: string;
}

/**
 * Rewrites what `ko resolve -P` printed (`<koRepo>/<import path>@sha256:…`)
 * to the images' names, and the release label `app.kubernetes.io/version:
 * devel` to the version, as the release script does. Fails on any `ko://`
 * reference ko left, or a reference to `koRepo` that is not an image.
 */
export function rewriteKoReferences(
  yaml: string,
  koRepo: string,
  nameFor: (importPath: string) => string,
  version: string,
): { yaml: string; images: ResolvedImage[] } {
  const images = new Map<string, ResolvedImage>();
  const pattern = new RegExp(`${koRepo.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/([A-Za-z0-9._/-]+)@(sha256:[0-9a-f]{64})`, 'g');
  let out = yaml.replace(pattern, (_all, importPath: string, digest: string) => {
    const name = nameFor(importPath);
    const seen = images.get(importPath);
    if (seen && seen.digest !== digest) throw new Error(`${importPath} resolved to two digests: ${seen.digest} and ${digest}`);
    images.set(importPath, { importPath, digest, name });
    return name;
  });
  const leftover = out.match(/ko:\/\/\S+/) ?? (out.includes(koRepo) ? [koRepo] : null);
  if (leftover) throw new Error(`unresolved image reference left in the manifest: ${leftover[0]}`);
  out = out.replace(/app\.kubernetes\.io\/version: devel\b/g, `app.kubernetes.io/version: "${version.replace(/^v/, '')}"`);
  return { yaml: out, images: [...images.values()] };
}

// ---------------------------------------------------------------- base image

const PASSWD = 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n';
const GROUP = 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n';
export const NONROOT_USER = '65532';
const CA_BUNDLE = '/etc/ssl/certs/ca-certificates.crt';
const BASE_ENV = ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin', `SSL_CERT_FILE=${CA_BUNDLE}`];

/** The base image's files: CA certificates, passwd and group with root, nobody and nonroot (65532), /tmp. */
export function baseImageEntries(caBundle: Buffer): TarEntry[] {
  return [
    { type: 'dir', path: 'etc', mode: 0o755 },
    { type: 'file', path: 'etc/group', mode: 0o644, data: Buffer.from(GROUP) },
    { type: 'file', path: 'etc/nsswitch.conf', mode: 0o644, data: Buffer.from('hosts: files dns\n') },
    { type: 'file', path: 'etc/passwd', mode: 0o644, data: Buffer.from(PASSWD) },
    { type: 'dir', path: 'etc/ssl', mode: 0o755 },
    { type: 'dir', path: 'etc/ssl/certs', mode: 0o755 },
    { type: 'file', path: 'etc/ssl/certs/ca-certificates.crt', mode: 0o644, data: caBundle },
    { type: 'dir', path: 'tmp', mode: 0o1777 },
  ];
}

interface Blob {
  readonly digest: string;
  readonly size: number;
  readonly data: Buffer;
}

function blob(data: Buffer): Blob {
  return { digest: `sha256:${createHash('sha256').update(data).digest('hex')}`, size: data.length, data };
}

/** A one-layer (gzip) image: its manifest, config and layer blobs. Deterministic. */
export function gzipImage(layer: readonly TarEntry[], config: ImageConfig): { manifest: Blob; blobs: Blob[] } {
  const uncompressed = tar(layer);
  const layerBlob = blob(gzipSync(uncompressed, { level: 9 }));
  const configBlob = blob(
    Buffer.from(
      JSON.stringify({
        architecture: 'amd64',
        os: 'linux',
        config: {
          Env: config.env ?? BASE_ENV,
          ...(config.entrypoint ? { Entrypoint: config.entrypoint } : {}),
          ...(config.user ? { User: config.user } : {}),
          WorkingDir: config.workingDir ?? '/',
        },
        rootfs: { type: 'layers', diff_ids: [blob(uncompressed).digest] },
      }),
    ),
  );
  const manifest = blob(
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: 'application/vnd.oci.image.manifest.v1+json',
        config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: configBlob.digest, size: configBlob.size },
        layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', digest: layerBlob.digest, size: layerBlob.size }],
      }),
    ),
  );
  return { manifest, blobs: [configBlob, layerBlob, manifest] };
}

/** Writes the base image into ko's cache (`<kocache>/img`, an OCI layout) and returns its digest ref. */
async function writeKoBase(kocache: string): Promise<{ ref: string; digest: string }> {
  const { manifest, blobs } = gzipImage(baseImageEntries(await readFile(CA_BUNDLE)), { user: NONROOT_USER });
  const layout = join(kocache, 'img');
  await mkdir(join(layout, 'blobs', 'sha256'), { recursive: true });
  for (const b of blobs) await writeFile(join(layout, 'blobs', 'sha256', b.digest.slice(7)), b.data);
  await writeFile(join(layout, 'oci-layout'), JSON.stringify({ imageLayoutVersion: '1.0.0' }));
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [{ mediaType: 'application/vnd.oci.image.manifest.v1+json', digest: manifest.digest, size: manifest.size }],
  };
  await writeFile(join(layout, 'index.json'), JSON.stringify(index));
  return { ref: `${IMAGE_REGISTRY}/base@${manifest.digest}`, digest: manifest.digest };
}

/** The digest the base image has on this machine (it carries the host's CA bundle). */
function baseDigest(): string {
  return gzipImage(baseImageEntries(readFileSync(CA_BUNDLE)), { user: NONROOT_USER }).manifest.digest;
}

/** Cuts one image (by manifest digest) out of an OCI layout into an archive `ctr images import` reads as `name`. */
export async function archiveFromLayout(layout: string, digest: string, name: string): Promise<Buffer> {
  const read = (d: string): Promise<Buffer> => readFile(join(layout, 'blobs', 'sha256', d.replace(/^sha256:/, '')));
  let manifestDigest = digest;
  let raw = await read(digest);
  let parsed = JSON.parse(raw.toString()) as {
    mediaType?: string;
    manifests?: { digest: string; platform?: { os?: string; architecture?: string } }[];
    config?: { digest: string };
    layers?: { digest: string }[];
  };
  if (parsed.manifests) {
    const amd64 = parsed.manifests.find((m) => m.platform?.os === 'linux' && m.platform.architecture === 'amd64') ?? parsed.manifests[0];
    if (!amd64) throw new Error(`${name}: empty image index ${digest}`);
    manifestDigest = amd64.digest;
    raw = await read(manifestDigest);
    parsed = JSON.parse(raw.toString()) as typeof parsed;
  }
  if (!parsed.config || !parsed.layers) throw new Error(`${name}: ${manifestDigest} is not an image manifest`);
  const digests = [...new Set([parsed.config.digest, ...parsed.layers.map((l) => l.digest), manifestDigest])].sort();
  const files: TarEntry[] = [];
  for (const d of digests) files.push({ type: 'file', path: `blobs/sha256/${d.slice(7)}`, mode: 0o644, data: await read(d) });
  const index = {
    schemaVersion: 2,
    mediaType: 'application/vnd.oci.image.index.v1+json',
    manifests: [
      {
        mediaType: parsed.mediaType ?? 'application/vnd.oci.image.manifest.v1+json',
        digest: manifestDigest,
        size: raw.length,
        annotations: { 'io.containerd.image.name': name, 'org.opencontainers.image.ref.name': name.slice(name.lastIndexOf(':') + 1) },
      },
    ],
  };
  return tar([
    { type: 'dir', path: 'blobs', mode: 0o755 },
    { type: 'dir', path: 'blobs/sha256', mode: 0o755 },
    ...files,
    { type: 'file', path: 'index.json', mode: 0o644, data: Buffer.from(JSON.stringify(index)) },
    { type: 'file', path: 'oci-layout', mode: 0o644, data: Buffer.from(JSON.stringify({ imageLayoutVersion: '1.0.0' })) },
  ]);
}

// ---------------------------------------------------------------- running things

function seconds(since: number): string {
  return `${Math.round((Date.now() - since) / 1000)}s`;
}

/** Runs a command, returns stdout; a heartbeat line every minute while it runs. */
function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Readonly<Record<string, string>>; label: string; onProgress: ProgressFn },
): Promise<string> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const child = spawn(command, args, { cwd: options.cwd, env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const heartbeat = setInterval(() => options.onProgress(`${options.label}: still running (${seconds(started)})`), 60_000);
    child.on('error', (error) => {
      clearInterval(heartbeat);
      reject(error);
    });
    child.on('close', (code) => {
      clearInterval(heartbeat);
      if (code === 0) resolve(stdout);
      else reject(new Error(`${command} ${args.join(' ')} (in ${options.cwd}) failed with ${code}:\n${(stderr || stdout).slice(-4000)}`));
    });
  });
}

/** `go mod download` of module@version, copied writable to `target` (the module cache is read-only). */
async function moduleCopy(module: string, version: string, scratch: string, target: string, onProgress: ProgressFn): Promise<string> {
  await mkdir(scratch, { recursive: true });
  if (!existsSync(join(scratch, 'go.mod'))) await writeFile(join(scratch, 'go.mod'), 'module swarm.local/scratch\n\ngo 1.22\n');
  const out = JSON.parse(
    await run('go', ['mod', 'download', '-json', `${module}@${version}`], { cwd: scratch, label: `download ${module}`, onProgress }),
  ) as { Dir?: string; Error?: string };
  if (out.Error || !out.Dir) throw new Error(`go mod download ${module}@${version}: ${out.Error ?? 'no Dir'}`);
  await rm(target, { recursive: true, force: true });
  await cp(out.Dir, target, { recursive: true });
  await chmodTree(target);
  return target;
}


interface Done {
  readonly builtAt: string;
  readonly seconds: number;
  readonly images: readonly { name: string; file: string; digest?: string }[];
  readonly manifests?: Readonly<Record<string, string>>;
}

async function cached<T extends Done>(dir: string, what: string, onProgress: ProgressFn, build: () => Promise<Omit<T, 'builtAt' | 'seconds'>>): Promise<T> {
  const marker = join(dir, 'done.json');
  const read = (): T | undefined => (existsSync(marker) ? (JSON.parse(readFileSync(marker, 'utf8')) as T) : undefined);
  const hit = read();
  if (hit) return hit;
  await mkdir(dir, { recursive: true });
  const release = await acquireLock(join(dir, '.lock'), onProgress, `${what} build`);
  try {
    const again = read();
    if (again) return again;
    const started = Date.now();
    onProgress(`${what}: building into ${dir}`);
    const result = { ...(await build()), builtAt: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000) } as T;
    await writeFile(marker, JSON.stringify(result, null, 2) + '\n');
    onProgress(`${what}: done in ${result.seconds}s`);
    return result;
  } finally {
    await release();
  }
}

function goInputs(pins: ImagePins): Record<string, unknown> {
  return { go: goVersion(), goBuildFlags: pins.goBuildFlags, ldflags: pins.goLdflags };
}

/** A Go command built in its module's own tree (its go.mod, go.sum and replaces), CGO off. */
async function goTool(
  id: string,
  module: string,
  version: string,
  pkg: string,
  binary: string,
  pins: ImagePins,
  onProgress: ProgressFn,
  ldflags = pins.goLdflags,
): Promise<string> {
  const dir = join(cacheRoot(), imageCacheKey(id, version, { ...goInputs(pins), module, pkg, ldflags }));
  await cached<Done>(dir, `${id} ${version}`, onProgress, async () => {
    const src = await moduleCopy(module, version, join(dir, 'scratch'), join(dir, 'module'), onProgress);
    await mkdir(join(dir, 'bin'), { recursive: true });
    const started = Date.now();
    onProgress(`${id}: compiling ${module}/${pkg.replace(/^\.\/?/, '')}@${version} …`);
    await run('go', ['build', ...pins.goBuildFlags, `-ldflags=${ldflags}`, '-o', join(dir, 'bin', binary), pkg], {
      cwd: src,
      env: { CGO_ENABLED: '0' },
      label: `${id} go build`,
      onProgress,
    });
    onProgress(`${id}: ${binary} built in ${seconds(started)}`);
    await rm(src, { recursive: true, force: true });
    await rm(join(dir, 'scratch'), { recursive: true, force: true });
    return { images: [] };
  });
  return join(dir, 'bin', binary);
}

// ---------------------------------------------------------------- the builds

export interface KnativeImages {
  /** Every image, ready for `cluster.importImages`. */
  readonly archives: readonly (ImageArchive & { readonly bytes: number })[];
  /** Release YAMLs with the image references resolved, by file name (serving-core.yaml, …). */
  readonly manifests: Readonly<Record<string, string>>;
  readonly cacheDirs: readonly string[];
}

async function buildKnativeModule(mod: KnativeModule, pins: ImagePins, ko: string, onProgress: ProgressFn): Promise<{ dir: string; done: Done }> {
  const base = baseDigest();
  const dir = join(
    cacheRoot(),
    imageCacheKey(`${mod.id}-images`, mod.version, {
      ...goInputs(pins),
      module: mod.module,
      ko: pins.ko,
      base,
      manifests: mod.manifests,
      links: mod.links,
    }),
  );
  const done = await cached<Done>(dir, `${mod.id} ${mod.version}`, onProgress, async () => {
    const src = await moduleCopy(mod.module, mod.version, join(dir, 'scratch'), join(dir, 'module'), onProgress);
    const goMod = await readFile(join(src, 'go.mod'), 'utf8');
    const deps = new Map<string, string>();
    for (const link of mod.links) {
      if (!link.module) {
        await cp(join(src, link.file), join(src, link.path));
        onProgress(`${mod.id}: ${link.path} from ${link.file} (a symlink in the repository, not in the module zip)`);
        continue;
      }
      const version = requiredVersion(goMod, link.module);
      const from =
        deps.get(link.module) ??
        (await moduleCopy(link.module, version, join(dir, 'scratch'), join(dir, 'deps', link.module.replaceAll('/', '_')), onProgress));
      deps.set(link.module, from);
      await cp(join(from, link.file), join(src, link.path));
      onProgress(`${mod.id}: ${link.path} from ${link.module}@${version}/${link.file} (a symlink in the repository, not in the module zip)`);
    }
    await rm(join(dir, 'deps'), { recursive: true, force: true });
    const kocache = join(dir, 'kocache');
    const { ref } = await writeKoBase(kocache);
    // Replaces the module's .ko.yaml (a base image from a registry). ko adds -trimpath itself.
    const flags = pins.goBuildFlags.filter((f) => f !== '-trimpath');
    await writeFile(
      join(src, '.ko.yaml'),
      `defaultBaseImage: ${ref}\n${flags.length > 0 ? `defaultFlags: ${JSON.stringify(flags)}\n` : ''}defaultLdflags: ${JSON.stringify(pins.goLdflags.split(' '))}\n`,
    );
    const layout = join(dir, 'layout');
    await rm(layout, { recursive: true, force: true });
    const env = { KO_DOCKER_REPO: KO_REPO, KOCACHE: kocache, CGO_ENABLED: '0' };
    await mkdir(join(dir, 'manifests'), { recursive: true });
    await mkdir(join(dir, 'images'), { recursive: true });
    const images = new Map<string, ResolvedImage>();
    const manifests: Record<string, string> = {};
    for (const manifest of mod.manifests) {
      const started = Date.now();
      onProgress(`${mod.id}: ko resolve ${manifest.args.join(' ')} → ${manifest.file} (builds the commands it names) …`);
      const printed = await run(
        ko,
        ['resolve', '--push=false', `--oci-layout-path=${layout}`, '--tarball=/dev/null', '-P', '--platform=linux/amd64', '--sbom=none', ...manifest.args],
        { cwd: src, env, label: `${mod.id} ko resolve ${manifest.file}`, onProgress },
      );
      const resolved = rewriteKoReferences(printed, KO_REPO, (p) => knativeImageName(mod, p), mod.version);
      for (const image of resolved.images) images.set(image.importPath, image);
      await writeFile(join(dir, 'manifests', manifest.file), resolved.yaml);
      manifests[manifest.file] = join('manifests', manifest.file);
      onProgress(`${mod.id}: ${manifest.file} in ${seconds(started)} (${resolved.images.map((i) => i.importPath.split('/cmd/')[1]).join(', ') || 'no images'})`);
    }
    const written: { name: string; file: string; digest: string }[] = [];
    for (const image of images.values()) {
      const file = join('images', `${image.importPath.split('/cmd/')[1]!.replaceAll('/', '-')}.tar`);
      await writeFile(join(dir, file), await archiveFromLayout(layout, image.digest, image.name));
      written.push({ name: image.name, file, digest: image.digest });
    }
    // The layout, ko's binaries and the module copy are not needed once the archives exist.
    for (const leftover of [layout, kocache, src, join(dir, 'scratch')]) await rm(leftover, { recursive: true, force: true });
    return { images: written, manifests };
  });
  return { dir, done };
}

/** Traefik's cmd/traefik, version stamped as its Makefile does; the web UI's assets are not in the module (webui/static holds a placeholder). */
async function buildTraefik(pins: ImagePins, onProgress: ProgressFn): Promise<{ dir: string; done: Done }> {
  const module = 'github.com/traefik/traefik/v3';
  const ldflags = `${pins.goLdflags} -X ${module}/pkg/version.Version=${pins.traefik}`;
  const binary = await goTool('traefik', module, pins.traefik, './cmd/traefik', 'traefik', pins, onProgress, ldflags);
  const name = `${IMAGE_REGISTRY}/traefik:${pins.traefik}`;
  const dir = join(cacheRoot(), imageCacheKey('traefik-image', pins.traefik, { binary, base: baseDigest() }));
  const done = await cached<Done>(dir, `traefik image ${pins.traefik}`, onProgress, async () => {
    await writeSingleLayerImage(name, binary, '/traefik', undefined, join(dir, 'traefik.tar'));
    return { images: [{ name, file: 'traefik.tar' }] };
  });
  return { dir, done };
}

/** otelcol: the collector builder (ocb) writes and compiles a distribution with the components of otelcolBuilderConfig. */
async function buildOtelcol(pins: ImagePins, onProgress: ProgressFn): Promise<{ dir: string; done: Done }> {
  const builder = await goTool('otelcol-builder', 'go.opentelemetry.io/collector/cmd/builder', pins.otelcol, '.', 'builder', pins, onProgress);
  const name = `${IMAGE_REGISTRY}/otelcol:${pins.otelcol}`;
  const dir = join(cacheRoot(), imageCacheKey('otelcol-image', pins.otelcol, { ...goInputs(pins), builder, base: baseDigest(), config: otelcolBuilderConfig(pins, '') }));
  const done = await cached<Done>(dir, `otelcol ${pins.otelcol}`, onProgress, async () => {
    const out = join(dir, 'dist');
    await rm(out, { recursive: true, force: true });
    await mkdir(out, { recursive: true });
    await writeFile(join(dir, 'builder-config.yaml'), otelcolBuilderConfig(pins, out));
    const started = Date.now();
    onProgress(`otelcol: ocb generating and compiling the collector (otlp receiver; debug, otlp, otlphttp exporters) …`);
    await run(builder, ['--config', join(dir, 'builder-config.yaml')], { cwd: dir, env: { CGO_ENABLED: '0' }, label: 'otelcol build', onProgress });
    onProgress(`otelcol: compiled in ${seconds(started)}`);
    await writeSingleLayerImage(name, join(out, 'otelcol'), '/otelcol', NONROOT_USER, join(dir, 'otelcol.tar'));
    await rename(join(out, 'otelcol'), join(dir, 'otelcol'));
    await rm(out, { recursive: true, force: true });
    return { images: [{ name, file: 'otelcol.tar' }] };
  });
  return { dir, done };
}

/** The base files plus one static binary, as one uncompressed layer (oci.ts). */
async function writeSingleLayerImage(name: string, binary: string, at: string, user: string | undefined, out: string): Promise<void> {
  const entries: TarEntry[] = [
    ...baseImageEntries(await readFile(CA_BUNDLE)),
    { type: 'file' as const, path: at.slice(1), mode: 0o755, data: await readFile(binary) },
  ].sort((a, b) => a.path.localeCompare(b.path));
  const { archive } = ociArchive(name, entries, { entrypoint: [at], env: BASE_ENV, ...(user ? { user } : {}) });
  await writeFile(`${out}.tmp`, archive);
  await rename(`${out}.tmp`, out);
}

export type KnativeImagesPart = 'serving' | 'eventing' | 'traefik' | 'otelcol';
export const ALL_PARTS: readonly KnativeImagesPart[] = ['serving', 'eventing', 'traefik', 'otelcol'];

/**
 * Builds (once; cached) Knative Serving and Eventing images and release
 * YAMLs, Traefik and otelcol. A part that fails is reported by throwing after
 * the others were built.
 */
export async function buildKnativeImages(
  onProgress: ProgressFn = stderrProgress,
  parts: readonly KnativeImagesPart[] = ALL_PARTS,
): Promise<KnativeImages> {
  const pins = readImagePins();
  const results: { dir: string; done: Done }[] = [];
  const failures: string[] = [];
  const attempt = async (part: string, build: () => Promise<{ dir: string; done: Done }>): Promise<void> => {
    try {
      results.push(await build());
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      onProgress(`${part}: FAILED: ${message}`);
      failures.push(`${part}: ${message}`);
    }
  };
  const modules = knativeModules(pins).filter((m) => parts.includes(m.component));
  let ko: string | undefined;
  if (modules.length > 0) {
    try {
      ko = await goTool('ko', 'github.com/google/ko', pins.ko, '.', 'ko', pins, onProgress);
    } catch (error) {
      failures.push(`ko: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  for (const mod of modules) if (ko) await attempt(mod.id, () => buildKnativeModule(mod, pins, ko, onProgress));
  if (parts.includes('traefik')) await attempt('traefik', () => buildTraefik(pins, onProgress));
  if (parts.includes('otelcol')) await attempt('otelcol', () => buildOtelcol(pins, onProgress));
  if (failures.length > 0) throw new Error(`some images could not be built:\n${failures.join('\n')}`);

  const archives: (ImageArchive & { bytes: number })[] = [];
  const manifests: Record<string, string> = {};
  for (const { dir, done } of results) {
    for (const image of done.images) {
      const path = join(dir, image.file);
      archives.push({ name: image.name, path, bytes: (await stat(path)).size });
    }
    for (const [file, relative] of Object.entries(done.manifests ?? {})) manifests[file] = join(dir, relative);
  }
  return { archives, manifests, cacheDirs: results.map((r) => r.dir) };
}
