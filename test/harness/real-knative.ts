// Real Knative on the local node: Serving + Eventing (the release-equivalent
// YAMLs and images `npm run knative:images` builds from the pinned modules),
// Traefik as Serving's networking layer (its Knative provider), then Swarm
// deployed the user's way (`npm run deploy -- --image …`) and the seed's
// sample. Dev tooling only: the manifests it adds live in ./knative-stack/.
//   installKnative(workDir, { kubeconfig, progress })   the stack, Ready
//   deploySwarmOnKnative(workDir, { kubeconfig, progress })   Swarm's functions as Knative Services
import { execFile } from 'node:child_process';
import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { binPath, importImages, type Cluster } from '../controlplane/cluster.js';
import { buildKnativeImages, baseImageEntries, IMAGE_REGISTRY, readImagePins } from '../controlplane/knative-images.js';
import { ociArchive } from '../controlplane/oci.js';
import { readPins, toolDir } from '../controlplane/build.js';
import { toolSpecs } from '../controlplane/recipe.js';
import { ensureImages } from '../image/build.js';
import { collectorImage, installTracing } from './knative-tracing.js';
import { withWorkerImage } from './worker-pool.js';

const run = promisify(execFile);
const repo = resolve(import.meta.dirname, '../..');
export const STACK_DIR = join(import.meta.dirname, 'knative-stack');
// The one kubectl runner and the installation's namespace (swarm-install.ts), for this file's importers too.
export { kubectl, SYSTEM_NAMESPACE } from './swarm-install.js';
import { kubectl, SYSTEM_NAMESPACE } from './swarm-install.js';

export type Progress = (line: string) => void;
export interface StackOptions {
  readonly kubeconfig: string;
  readonly progress?: Progress;
}

const say = (options: StackOptions): Progress => options.progress ?? ((line) => process.stderr.write(`[knative] ${line}\n`));
const seconds = (since: number): string => `${((Date.now() - since) / 1000).toFixed(1)} s`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));


/** Retries `fn` while it throws (webhooks not serving yet, CRDs not established), up to `timeoutMs`. */
async function retrying<T>(what: string, progress: Progress, fn: () => Promise<T>, timeoutMs = 180_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let tries = 0;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const message = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
      if (Date.now() > deadline) throw new Error(`${what}: ${message}`);
      if (++tries % 5 === 1) progress(`${what}: not yet (${message.split('\n')[0]}); retrying`);
      await sleep(2000);
    }
  }
}

// The release YAMLs and this node's ConfigMap keys have their own field managers: one apply never
// removes what the other set (a server-side apply drops the fields its manager no longer sends).
const apply = (kubeconfig: string, file: string, manager = 'swarm-dev-knative') =>
  kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', `--field-manager=${manager}`, '-f', file]);

/** Waits until every Deployment of `namespace` is Available, printing what is still missing now and then. */
async function waitDeployments(kubeconfig: string, namespace: string, progress: Progress, timeoutMs = 300_000): Promise<void> {
  const started = Date.now();
  let lastSaid = 0;
  for (;;) {
    const list = JSON.parse(await kubectl(kubeconfig, ['get', 'deployments', '-n', namespace, '-o', 'json'])) as {
      items: { metadata: { name: string }; spec: { replicas?: number }; status: { availableReplicas?: number } }[];
    };
    const waiting = list.items.filter((d) => (d.spec.replicas ?? 1) > 0 && (d.status.availableReplicas ?? 0) < (d.spec.replicas ?? 1)).map((d) => d.metadata.name);
    if (list.items.length > 0 && waiting.length === 0) {
      progress(`${namespace}: ${list.items.length} Deployments available after ${seconds(started)}`);
      return;
    }
    if (Date.now() - started > timeoutMs) throw new Error(`${namespace}: not available after ${seconds(started)}: ${waiting.join(', ')}`);
    if (Date.now() - lastSaid > 10_000) {
      progress(`${namespace}: waiting for ${waiting.join(', ') || 'Deployments'} (${seconds(started)})`);
      lastSaid = Date.now();
    }
    await sleep(1000);
  }
}

/** Waits until `kubectl get <kind> -n ns` shows each named object with condition Ready=True. */
export async function waitReady(kubeconfig: string, namespace: string, kind: string, names: readonly string[], progress: Progress, timeoutMs = 300_000): Promise<void> {
  const started = Date.now();
  let lastSaid = 0;
  for (;;) {
    const list = JSON.parse(await kubectl(kubeconfig, ['get', kind, '-n', namespace, '-o', 'json'])) as {
      items: { metadata: { name: string }; status?: { conditions?: { type: string; status: string; reason?: string; message?: string }[] } }[];
    };
    const notReady = names.filter((name) => {
      const item = list.items.find((i) => i.metadata.name === name);
      return item?.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True';
    });
    if (notReady.length === 0) {
      progress(`${kind} ${names.join(', ')} Ready after ${seconds(started)}`);
      return;
    }
    const why = notReady.map((name) => {
      const ready = list.items.find((i) => i.metadata.name === name)?.status?.conditions?.find((c) => c.type === 'Ready');
      return `${name}${ready ? ` (${ready.reason ?? ready.status}${ready.message ? `: ${ready.message}` : ''})` : ''}`;
    });
    if (Date.now() - started > timeoutMs) throw new Error(`${kind} not Ready after ${seconds(started)}: ${why.join('; ')}`);
    if (Date.now() - lastSaid > 15_000) {
      progress(`waiting for ${kind} ${why.join('; ')}`);
      lastSaid = Date.now();
    }
    await sleep(1000);
  }
}

const clusterWorkDir = (cluster: Cluster | string): string => (typeof cluster === 'string' ? cluster : cluster.workDir);
async function importInto(cluster: Cluster | string, archives: { name: string; path: string }[], progress: Progress): Promise<void> {
  if (typeof cluster === 'string') await importImages(archives, cluster, progress);
  else await cluster.importImages(archives);
}

/**
 * Knative's own event logger (knative.dev/eventing/cmd/event_display at the
 * pinned eventing version) as an image, for Swarm's dead-letter Service: the
 * release YAMLs do not include it and its gcr.io image cannot be pulled here.
 * Compiled in the ApiServerSource adapter's module (already resolved, read-only).
 */
export async function eventDisplayImage(workDir: string, progress: Progress): Promise<{ name: string; path: string }> {
  const pins = readPins();
  const tool = toolSpecs(pins).find((t) => t.id === 'knative');
  if (!tool) throw new Error('no knative tool in the recipe');
  const out = join(workDir, 'knative', 'event_display');
  await mkdir(out, { recursive: true });
  const started = Date.now();
  await run('go', ['build', '-mod=readonly', '-trimpath', '-ldflags=-s -w', '-o', join(out, 'event_display'), 'knative.dev/eventing/cmd/event_display'], {
    cwd: join(toolDir(tool, pins), 'src'),
    env: { ...process.env, CGO_ENABLED: '0' },
    maxBuffer: 16 * 1024 * 1024,
  });
  const name = eventDisplayImageName();
  const entries = [
    ...baseImageEntries(await readFile('/etc/ssl/certs/ca-certificates.crt')),
    { type: 'file' as const, path: 'event_display', mode: 0o755, data: await readFile(join(out, 'event_display')) },
  ].sort((a, b) => a.path.localeCompare(b.path));
  const { archive } = ociArchive(name, entries, { entrypoint: ['/event_display'], env: ['PATH=/usr/local/bin:/usr/bin:/bin'], user: '65532' });
  const path = join(out, 'event_display.tar');
  await writeFile(path, archive);
  await rm(join(out, 'event_display'));
  progress(`event_display image ${name} in ${seconds(started)}`);
  return { name, path };
}

/** The dead-letter logger's image name, as eventDisplayImage imports it. */
export const eventDisplayImageName = (): string => `${IMAGE_REGISTRY}/knative/eventing/event_display:${readImagePins().knativeEventing}`;

export interface InstalledKnative {
  /** The dead-letter logger's image, imported (knative/base names one from gcr.io). */
  readonly eventDisplayImage: string;
}

/** Imports the images, applies Serving, Eventing, the in-memory channel, the MT broker, this node's config and Traefik; waits for every Deployment. */
export async function installKnative(cluster: Cluster | string, options: StackOptions): Promise<InstalledKnative> {
  const progress = say(options);
  const { kubeconfig } = options;
  const started = Date.now();
  const built = await buildKnativeImages(progress, ['serving', 'eventing', 'traefik']);
  const display = await eventDisplayImage(clusterWorkDir(cluster), progress);
  const imported = Date.now();
  await importInto(cluster, [...built.archives.map((a) => ({ name: a.name, path: a.path })), display], progress);
  progress(`${built.archives.length + 1} images imported in ${seconds(imported)}`);
  const manifest = (file: string): string => {
    const path = built.manifests[file];
    if (!path) throw new Error(`knative:images built no ${file}`);
    return path;
  };
  for (const crds of ['serving-crds.yaml', 'eventing-crds.yaml']) {
    await apply(kubeconfig, manifest(crds));
    progress(`applied ${crds}`);
  }
  await kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', '--all', 'crd']);
  for (const file of ['serving-core.yaml', 'eventing-core.yaml', 'in-memory-channel.yaml', 'mt-channel-broker.yaml']) {
    await retrying(`apply ${file}`, progress, () => apply(kubeconfig, manifest(file)));
    progress(`applied ${file}`);
  }
  await apply(kubeconfig, join(STACK_DIR, 'traefik.yaml'), 'swarm-dev-traefik');
  progress('applied knative-stack/traefik.yaml');
  await waitDeployments(kubeconfig, 'knative-serving', progress);
  // Serving's webhook validates its ConfigMaps: only now can they change.
  await retrying('apply knative-stack/config.yaml', progress, () => apply(kubeconfig, join(STACK_DIR, 'config.yaml'), 'swarm-dev-config'));
  progress('applied knative-stack/config.yaml');
  await waitDeployments(kubeconfig, 'knative-eventing', progress);
  await waitDeployments(kubeconfig, 'traefik', progress);
  progress(`Knative Serving + Eventing + Traefik ready in ${seconds(started)}`);
  return { eventDisplayImage: display.name };
}

/**
 * installKnative, then the trace pipeline: the collector imported and
 * installed, Knative's config-observability pointed at it, its spans
 * forwarded to `sinkEndpoint` (a trace sink the pods reach). Before Swarm is
 * deployed: the functions' queue-proxies read config-observability when made.
 */
export async function installKnativeWithTracing(cluster: Cluster | string, options: StackOptions & { sinkEndpoint: string }): Promise<InstalledKnative> {
  const progress = say(options);
  const installed = await installKnative(cluster, options);
  const started = Date.now();
  await importInto(cluster, [await collectorImage(progress)], progress);
  await installTracing((args, stdin) => kubectl(options.kubeconfig, args, stdin), { sinkEndpoint: options.sinkEndpoint });
  progress(`tracing in ${seconds(started)}: the collector in namespace observability, Knative exporting to it, spans forwarded to ${options.sinkEndpoint}`);
  return installed;
}

export interface DeployedSwarm {
  readonly functionsImage: string;
  readonly workerImage: string;
}

/**
 * Swarm the user's way: the functions image built from the Dockerfile and
 * imported, `npm run deploy -- --image <it> --watch-namespace swarm` (bin/deploy.ts
 * with the pinned kubectl), the dead-letter Service pointed at the imported
 * event_display, then every Knative object of it Ready.
 */
export async function deploySwarmOnKnative(cluster: Cluster | string, installed: InstalledKnative, options: StackOptions & { watchNamespaces?: readonly string[] }): Promise<DeployedSwarm> {
  const progress = say(options);
  const { kubeconfig } = options;
  const started = Date.now();
  const { functions, worker } = await ensureImages(progress);
  await importInto(cluster, [{ name: functions.name, path: functions.archive }, { name: worker.name, path: worker.archive }], progress);
  const namespaces = options.watchNamespaces ?? ['swarm'];
  // `--watch-namespace` labels and binds a namespace that must exist already.
  for (const ns of namespaces) {
    await kubectl(kubeconfig, ['create', 'namespace', ns]).catch((error: unknown) => {
      if (!String((error as { stderr?: string }).stderr ?? error).includes('AlreadyExists')) throw error;
    });
  }
  const watch = namespaces.flatMap((ns) => ['--watch-namespace', ns]);
  const { stdout } = await run(
    'npx',
    ['tsx', 'bin/deploy.ts', 'deploy', '--kubeconfig', kubeconfig, '--kubectl', binPath('kubectl'), '--image', functions.name, ...watch],
    { cwd: repo, maxBuffer: 16 * 1024 * 1024 },
  ).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`npm run deploy failed: ${error.stderr?.trim() || error.message}`);
  });
  for (const line of stdout.trim().split('\n')) progress(line);
  // knative/base's dead-letter logger names gcr.io's event_display (untagged: always pulled); here it is imported.
  // And one pod of it stays: its log is where the tests read the dead letters (scaled to zero, a log is gone).
  await kubectl(kubeconfig, [
    'patch', 'ksvc', 'swarm-dead-letter', '-n', SYSTEM_NAMESPACE, '--type', 'json',
    '-p', JSON.stringify([
      { op: 'replace', path: '/spec/template/spec/containers/0/image', value: installed.eventDisplayImage },
      { op: 'replace', path: '/spec/template/metadata/annotations/autoscaling.knative.dev~1min-scale', value: '1' },
    ]),
  ]);
  progress(`swarm-dead-letter runs ${installed.eventDisplayImage}, one pod kept (its log holds the dead letters)`);
  // Side by side: each waits on its own controller (the PingSource on its adapter's first start).
  await Promise.all([
    waitReady(kubeconfig, SYSTEM_NAMESPACE, 'ksvc', ['swarm-assign', 'swarm-restart', 'swarm-dead-letter'], progress),
    waitReady(kubeconfig, SYSTEM_NAMESPACE, 'broker', ['swarm'], progress),
    waitReady(kubeconfig, SYSTEM_NAMESPACE, 'trigger', ['swarm-assign', 'swarm-restart'], progress),
    waitReady(kubeconfig, SYSTEM_NAMESPACE, 'apiserversource', ['swarm'], progress),
    ...(namespaces.length > 0 ? [waitReady(kubeconfig, SYSTEM_NAMESPACE, 'pingsource', namespaces.map((ns) => `swarm-resync-${ns}`), progress)] : []),
  ]);
  progress(`Swarm deployed on Knative in ${seconds(started)}`);
  return { functionsImage: functions.name, workerImage: worker.name };
}

/** knative/samples (namespace swarm, the StatefulSet, the 27-stream Swarm), its worker running the imported image. */
export async function applySample(kubeconfig: string, workerImage: string): Promise<void> {
  const rendered = withWorkerImage(await kubectl(kubeconfig, ['kustomize', join(repo, 'knative', 'samples')]), workerImage);
  await kubectl(kubeconfig, ['apply', '-f', '-'], rendered);
}

/** Runs `fn`; a failure is a progress line (cleanup goes on), not an error. */
async function cleanupStep(progress: Progress, what: string, fn: () => Promise<unknown>): Promise<void> {
  try {
    await fn();
  } catch (error) {
    progress(`cleanup: ${what} failed: ${((error as { stderr?: string }).stderr ?? (error as Error).message).trim()}`);
  }
}

/**
 * Swarm as deploySwarmOnKnative left it, taken away (Knative stays): the
 * sample's namespace, `npm run undeploy` and the Swarm CRD while Knative's
 * controllers still clear their finalizers, then the installation's namespace.
 */
export async function undeploySwarm(kubeconfig: string, progress: Progress): Promise<void> {
  const step = (what: string, fn: () => Promise<unknown>) => cleanupStep(progress, what, fn);
  // No --watch-namespace: the namespace (and with it its bindings) is gone already.
  const deploy = (command: string) => run('npx', ['tsx', 'bin/deploy.ts', command, '--kubeconfig', kubeconfig, '--kubectl', binPath('kubectl')], { cwd: repo });
  await step('delete namespace swarm', () => kubectl(kubeconfig, ['delete', 'namespace', 'swarm', '--ignore-not-found', '--timeout=180s']));
  await step('npm run undeploy', () => deploy('undeploy'));
  await step('npm run uninstall:crd', () => deploy('uninstall-crd'));
  await step(`delete namespace ${SYSTEM_NAMESPACE}`, () => kubectl(kubeconfig, ['delete', 'namespace', SYSTEM_NAMESPACE, '--ignore-not-found', '--timeout=180s']));
}

/**
 * Takes it all away again (a cluster reused by other tests must not keep
 * Knative's webhooks and its 1.2 CPUs of requests): the sample's namespace,
 * `npm run undeploy` and the Swarm CRD while Knative's controllers still clear
 * their finalizers, then Traefik and the release YAMLs in reverse order.
 */
export async function uninstallSwarmAndKnative(kubeconfig: string, progress: Progress, options: { waitForNamespaces?: boolean } = {}): Promise<void> {
  const started = Date.now();
  const step = (what: string, fn: () => Promise<unknown>) => cleanupStep(progress, what, fn);
  await undeploySwarm(kubeconfig, progress);
  await step('delete traefik', () => kubectl(kubeconfig, ['delete', '--ignore-not-found', '--timeout=120s', '-f', join(STACK_DIR, 'traefik.yaml')]));
  const built = await buildKnativeImages(progress, ['serving', 'eventing']);
  for (const file of ['mt-channel-broker.yaml', 'in-memory-channel.yaml', 'eventing-core.yaml', 'serving-core.yaml', 'eventing-crds.yaml', 'serving-crds.yaml']) {
    const path = built.manifests[file];
    if (path) await step(`delete ${file}`, () => kubectl(kubeconfig, ['delete', '--ignore-not-found', '--wait=false', '-f', path]));
  }
  for (const ns of options.waitForNamespaces === false ? [] : ['knative-eventing', 'knative-serving']) {
    await step(`wait for namespace ${ns} to go`, () => kubectl(kubeconfig, ['wait', '--for=delete', `namespace/${ns}`, '--timeout=60s']));
  }
  progress(`Swarm, Knative and Traefik removed in ${seconds(started)}`);
}
