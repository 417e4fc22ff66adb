// Swarm installed from a release, as a platform team installs it: the
// release cut by `npm run release` from this tree (dev/release.ts) and pushed
// to the testbed's registry (test/registry/local-registry.ts, which the real
// node's containerd pulls from), then `kubectl apply --server-side` of
// swarm-crds.yaml and swarm.yaml, or `helm install` of its chart; every image
// pulled by digest, none imported. For the end-to-end files of the release
// (release-e2e).
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { RELEASE_IMAGES, type ReleaseImage } from '../../dev/release/manifests.js';
import { pushLayout } from '../../dev/release/push.js';
import { repoRoot } from '../controlplane/cluster.js';
import { kubectl, SYSTEM_NAMESPACE, waitReady, type Progress } from './real-knative.js';

const run = promisify(execFile);

/**
 * Whether the release's end-to-end files run (release-e2e, upgrade-e2e): only
 * with SWARM_E2E_RELEASE=1 (docs/release.md: how to run them). Together they add about
 * seven minutes to the integration tier (measured alone: 5 min 36 s, 110 s of
 * it waiting for Knative), which a warm local `npm test` (12 minutes at most)
 * has no room for.
 */
export const RELEASE_E2E = process.env.SWARM_E2E_RELEASE === '1';

/** The path under the registry a release's images go to (REGISTRY/swarm/swarm@sha256:…). */
const PATH = 'swarm';

export interface PushedRelease {
  readonly version: string;
  readonly dir: string;
  /** The release's `--registry`: host:port/swarm. */
  readonly registry: string;
  /** Each image's manifest digest, as swarm.yaml names it. */
  readonly digests: Readonly<Record<ReleaseImage, string>>;
  /** `registry/name@digest` of each image. */
  readonly refs: Readonly<Record<ReleaseImage, string>>;
  /** The packaged chart, swarm-VERSION.tgz. */
  readonly chart: string;
}

/**
 * `npm run release -- --no-push` into `dir`, then each image's layout pushed
 * as the release pushes it (dev/release/push.ts, digest preserved and checked).
 * Not `npm run release` with its push: that records the release in
 * RELEASES.json and refuses a tree with uncommitted changes.
 */
export async function cutAndPushRelease(registryAddress: string, version: string, dir: string, progress: Progress): Promise<PushedRelease> {
  const registry = `${registryAddress}/${PATH}`;
  const started = Date.now();
  await run(join(repoRoot, 'node_modules', '.bin', 'tsx'), ['dev/release.ts', '--registry', registry, '--version', version, '--out', dir, '--no-push', '--no-sbom'], {
    cwd: repoRoot,
    maxBuffer: 16 * 1024 * 1024,
  }).catch((error: { stderr?: string; message: string }) => {
    throw new Error(`npm run release failed: ${error.stderr?.trim() || error.message}`);
  });
  progress(`release v${version} cut into ${dir} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const digests = {} as Record<ReleaseImage, string>;
  const refs = {} as Record<ReleaseImage, string>;
  for (const image of Object.keys(RELEASE_IMAGES) as ReleaseImage[]) {
    const layout = join(dir, 'images', RELEASE_IMAGES[image]);
    const index = JSON.parse(await readFile(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
    digests[image] = index.manifests[0]!.digest;
    refs[image] = `${registry}/${RELEASE_IMAGES[image]}@${digests[image]}`;
    await pushLayout(layout, `${registry}/${RELEASE_IMAGES[image]}`, version, digests[image], progress, { plainHttp: true });
  }
  progress(`release v${version} pushed to ${registry} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return { version, dir, registry, digests, refs, chart: join(dir, `swarm-${version}.tgz`) };
}

/** Retries `fn` while a webhook is not answering yet (Knative's, a moment after its pods restart). */
async function whileWebhooksStart<T>(what: string, progress: Progress, fn: () => Promise<T>, timeoutMs = 120_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (error) {
      const message = (error as { stderr?: string }).stderr?.trim() || (error as Error).message;
      if (Date.now() > deadline || !/failed calling webhook|connection refused|no endpoints available/.test(message)) throw new Error(`${what}: ${message}`);
      progress(`${what}: a webhook is not answering yet; again in 3 s`);
      await new Promise((r) => setTimeout(r, 3000));
    }
  }
}

/** The README's first install line: the CRD (Established), then the installation, both server-side. */
export async function applyRelease(kubeconfig: string, release: PushedRelease, progress: Progress): Promise<void> {
  await kubectl(kubeconfig, ['apply', '--server-side', '-f', join(release.dir, 'swarm-crds.yaml')]);
  await kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/swarms.k8slab.info']);
  await whileWebhooksStart('kubectl apply -f swarm.yaml', progress, () => kubectl(kubeconfig, ['apply', '--server-side', '-f', join(release.dir, 'swarm.yaml')]));
  progress(`applied swarm-crds.yaml and swarm.yaml of v${release.version}`);
}

/** Waits until every Knative object of the installation in `namespace` is Ready (the functions' images pulled from the registry). */
export async function installationReady(kubeconfig: string, progress: Progress, namespace = SYSTEM_NAMESPACE): Promise<void> {
  await Promise.all([
    waitReady(kubeconfig, namespace, 'ksvc', ['swarm-assign', 'swarm-restart', 'swarm-dead-letter'], progress),
    waitReady(kubeconfig, namespace, 'broker', ['swarm'], progress),
    waitReady(kubeconfig, namespace, 'trigger', ['swarm-assign', 'swarm-restart'], progress),
    waitReady(kubeconfig, namespace, 'apiserversource', ['swarm'], progress),
  ]);
}

/**
 * Each running container of `namespace`'s pods (selected by `selector`): the
 * image its spec names and containerd's image id (repository@digest of what
 * it pulled; the status's own `image` shows only a config digest for an image
 * named by digest).
 */
export async function runningImages(kubeconfig: string, namespace: string, selector: string): Promise<{ pod: string; image: string; imageID: string }[]> {
  const pods = JSON.parse(await kubectl(kubeconfig, ['get', 'pods', '-n', namespace, '-l', selector, '-o', 'json'])) as {
    items: {
      metadata: { name: string };
      spec: { containers: { name: string; image: string }[] };
      status?: { containerStatuses?: { name: string; imageID: string; state?: { running?: unknown } }[] };
    }[];
  };
  return pods.items.flatMap((p) =>
    (p.status?.containerStatuses ?? [])
      .filter((c) => c.state?.running)
      .map((c) => ({ pod: p.metadata.name, image: p.spec.containers.find((s) => s.name === c.name)?.image ?? '', imageID: c.imageID })),
  );
}

/** kind/namespace/name of every object of INSTALLED_KINDS, cluster-wide, that carries the installation's label. */
export async function installedObjects(kubeconfig: string): Promise<string[]> {
  const out = await kubectl(kubeconfig, [
    'get', INSTALLED_KINDS.join(','), '-A', '-l', 'app.kubernetes.io/part-of=swarm',
    '-o', 'jsonpath={range .items[*]}{.kind}/{.metadata.namespace}/{.metadata.name}{"\\n"}{end}',
  ]);
  return out.split('\n').filter(Boolean).sort();
}

/** The kinds a release installs (swarm.yaml, the chart), for installedObjects. */
export const INSTALLED_KINDS = [
  'serviceaccounts',
  'clusterroles.rbac.authorization.k8s.io',
  'rolebindings.rbac.authorization.k8s.io',
  'validatingadmissionpolicies.admissionregistration.k8s.io',
  'validatingadmissionpolicybindings.admissionregistration.k8s.io',
  'brokers.eventing.knative.dev',
  'triggers.eventing.knative.dev',
  'apiserversources.sources.knative.dev',
  'pingsources.sources.knative.dev',
  'services.serving.knative.dev',
] as const;
