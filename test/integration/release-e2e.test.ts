// Swarm installed from a release, on the real node with real Knative, as a
// platform team installs it (issue 36): `npm run release` of this tree pushed
// to the testbed's registry (CNCF Distribution, which the node's containerd
// pulls from over plain HTTP: a hosts.toml), then
//   - `kubectl apply --server-side` of swarm-crds.yaml and swarm.yaml, the
//     sample's namespace enabled by samples.yaml (its label and RoleBindings):
//     the sample converges, every image pulled by digest from the registry;
//   - `kubectl delete -f swarm.yaml`: everything goes but the CRD (and so the
//     Swarms and their ConfigMaps);
//   - `helm install` of the packaged chart (the project's helm), the sample's
//     namespace a `watchNamespaces` value: a resize converges; `helm
//     uninstall` leaves the CRD.
// Runs after knative-e2e (vitest.config.ts): it takes away the Swarm the other
// e2e files shared (deployed with `npm run deploy`) and reuses their Knative.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Swarm } from '../../lib/api/types.js';
import { resyncPingEvent } from '../../lib/events/ping.js';
import { ensureBuilt } from '../controlplane/build.js';
import { apiClients } from '../harness/cluster-fixtures.js';
import { awaitKnativeInBackground } from '../harness/knative-background.js';
import { installKnative, kubectl, SYSTEM_NAMESPACE, undeploySwarm, uninstallSwarmAndKnative } from '../harness/real-knative.js';
import { applyRelease, cutAndPushRelease, installationReady, installedObjects, RELEASE_E2E, runningImages, type PushedRelease } from '../harness/release-install.js';
import { postEvent, untilSourceWatches } from '../harness/swarm-on-knative.js';
import { startRegistry, type LocalRegistry } from '../registry/local-registry.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const realNode = inject('realNode');
const workDir = inject('clusterWorkDir');
/** samples.yaml's namespace, Swarm and StatefulSet. */
const NS = 'swarm';
const SAMPLE = 'swarm-worker';
const VERSION = '0.2.0-e2e';
/** Where the chart is installed: not swarm.yaml's namespace, which may still be terminating then. */
const HELM_NAMESPACE = 'swarm-helm';
const MINUTES = 60_000;
const { readSwarm } = apiClients(kubeconfig, NS);
const progress = (line: string) => process.stderr.write(`[release-e2e] ${line}\n`);

/** The sample Running with `replicas` Ready workers, each acknowledging its share, nothing uncovered. */
async function converged(replicas: number): Promise<Swarm> {
  return eventually(
    `Swarm ${SAMPLE} Running with ${replicas} acknowledging workers`,
    async () => {
      const s = await readSwarm(SAMPLE);
      const st = s.status;
      const ok =
        st?.phase === 'Running' &&
        st.readyReplicas === replicas &&
        st.uncoveredJobs === 0 &&
        st.observedGeneration === s.metadata?.generation &&
        st.workers?.length === replicas &&
        st.workers.every((w) => w.coverage === 'Acknowledged');
      return ok ? s : undefined;
    },
    5 * MINUTES,
    1000,
  );
}

/**
 * What the sample's PingSource sends every five minutes, sent now: the source's
 * adapter, rolled out anew for the namespace samples.yaml labels, lists what
 * is there already without an event for it, and the test need not wait up to
 * five minutes for the next resync.
 */
async function resyncNow(): Promise<void> {
  const ingress = (await kubectl(kubeconfig, ['get', 'service', 'broker-ingress', '-n', 'knative-eventing', '-o', 'jsonpath={.spec.clusterIP}'])).trim();
  expect(await postEvent(`http://${ingress}/${SYSTEM_NAMESPACE}/swarm`, resyncPingEvent({ namespace: NS }))).toBe(202);
}

const exists = async (args: string[]): Promise<boolean> => (await kubectl(kubeconfig, ['get', ...args, '--ignore-not-found', '-o', 'name'])).trim() !== '';

describe.skipIf(!realNode || !RELEASE_E2E)('Swarm installed from a release pushed to a registry (real Knative, the real node); SWARM_E2E_RELEASE=1, as CI runs it)', () => {
  let registry: LocalRegistry | undefined;
  let release: PushedRelease;
  let dir: string | undefined;
  let helm = '';

  beforeAll(async () => {
    const started = Date.now();
    const background = inject('knativeInstall');
    if (background) await awaitKnativeInBackground(background.dir, progress);
    else if (!(await exists(['deployment', 'mt-broker-ingress', '-n', 'knative-eventing']))) await installKnative(workDir, { kubeconfig, progress });
    // The Swarm the other e2e files shared goes: this file installs one of its own, from nothing but Knative.
    if (await exists(['namespace', SYSTEM_NAMESPACE])) await undeploySwarm(kubeconfig, progress);
    registry = await startRegistry(progress, { forNode: true });
    dir = await mkdtemp(join(tmpdir(), 'swarm-release-e2e-'));
    release = await cutAndPushRelease(registry.address, VERSION, dir, progress);
    helm = (await ensureBuilt(progress, ['helm'])).helm!;
    progress(`ready to install in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 40 * MINUTES);

  afterAll(async () => {
    await registry?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    // A fresh cluster goes with everything on it; a reused one is left without Swarm and Knative, as knative-e2e leaves it.
    if (basename(workDir).startsWith('test-')) return;
    await kubectl(kubeconfig, ['delete', 'namespace', HELM_NAMESPACE, '--ignore-not-found', '--wait=false']).catch(() => undefined);
    await uninstallSwarmAndKnative(kubeconfig, progress, { waitForNamespaces: true });
  }, 15 * MINUTES);

  it('kubectl apply --server-side of swarm-crds.yaml and swarm.yaml: the sample converges, every image pulled by digest from the registry', async () => {
    await applyRelease(kubeconfig, release, progress);
    await installationReady(kubeconfig, progress);
    await kubectl(kubeconfig, ['apply', '--server-side', '-f', join(release.dir, 'samples.yaml')]);
    await untilSourceWatches(kubeconfig, NS, true, progress);
    await resyncNow();
    const swarm = await converged(2);
    expect(swarm.spec.workload?.jobs).toHaveLength(27);
    // The workers and the functions run the release's images, resolved by containerd from the registry.
    const workers = await runningImages(kubeconfig, NS, 'app=swarm-worker');
    expect(workers).toHaveLength(2);
    for (const w of workers) expect({ image: w.image, imageID: w.imageID }).toEqual({ image: release.refs.worker, imageID: release.refs.worker });
    const functions = await runningImages(kubeconfig, SYSTEM_NAMESPACE, 'serving.knative.dev/service in (swarm-assign,swarm-restart,swarm-dead-letter)');
    const ours = functions.filter((c) => c.image.startsWith(`${release.registry}/`));
    expect(ours.length).toBeGreaterThan(0);
    for (const c of ours) expect([release.refs.functions, release.refs.eventDisplay]).toContain(c.imageID);
  }, 15 * MINUTES);

  it('kubectl delete -f swarm.yaml removes the installation but the CRD: the Swarms and their ConfigMaps stay', async () => {
    // Not waiting for its namespace to finish terminating (a minute or more: the functions' pods drain):
    // the helm install below goes to a namespace of its own meanwhile, and the last test checks it went.
    await kubectl(kubeconfig, ['delete', '-f', join(release.dir, 'swarm.yaml'), '--wait=false']);
    const left = await installedObjects(kubeconfig);
    // Cluster-wide, what is left is samples.yaml's (the namespace's RoleBindings); the rest goes with the namespace.
    expect(left.filter((o) => o.split('/')[1] !== SYSTEM_NAMESPACE)).toEqual(['RoleBinding/swarm/swarm-assign', 'RoleBinding/swarm/swarm-restart', 'RoleBinding/swarm/swarm-source']);
    expect((await kubectl(kubeconfig, ['get', 'namespace', SYSTEM_NAMESPACE, '--ignore-not-found', '-o', 'jsonpath={.status.phase}'])).trim()).toMatch(/^(Terminating)?$/);
    expect(await exists(['crd', 'swarms.k8slab.info'])).toBe(true);
    expect(await exists(['swarm', SAMPLE, '-n', NS])).toBe(true);
    expect(await exists(['configmap', `${SAMPLE}-config`, '-n', NS])).toBe(true);
  }, 5 * MINUTES);

  it('helm install of the chart, the namespace a watchNamespaces value: a resize converges; helm uninstall leaves the CRD', async () => {
    // The chart binds its watched namespaces itself: samples.yaml's bindings would be another owner's.
    await kubectl(kubeconfig, ['delete', 'rolebinding', '-n', NS, 'swarm-assign', 'swarm-restart', 'swarm-source']);
    const helmRun = async (args: string[]) => (await promisify(execFile)(helm, [...args, '--kubeconfig', kubeconfig])).stdout.trim();
    progress(await helmRun(['install', 'swarm', release.chart, '-n', HELM_NAMESPACE, '--create-namespace', '--set', `watchNamespaces={${NS}}`]));
    await installationReady(kubeconfig, progress, HELM_NAMESPACE);
    await untilSourceWatches(kubeconfig, NS, true, progress, undefined, HELM_NAMESPACE);
    await kubectl(kubeconfig, ['scale', `swm/${SAMPLE}`, '-n', NS, '--replicas', '3']);
    await converged(3);
    progress(await helmRun(['uninstall', 'swarm', '-n', HELM_NAMESPACE, '--wait', '--timeout', '3m']));
    // Nothing of either install is left anywhere (swarm.yaml's namespace gone too), but the CRD and the Swarm.
    await eventually("both installs' objects gone", async () => (await installedObjects(kubeconfig)).length === 0, 3 * MINUTES, 1000);
    await kubectl(kubeconfig, ['wait', '--for=delete', `namespace/${SYSTEM_NAMESPACE}`, '--timeout=180s']).catch(() => undefined);
    expect(await exists(['namespace', SYSTEM_NAMESPACE])).toBe(false);
    expect(await exists(['crd', 'swarms.k8slab.info'])).toBe(true);
    expect(await exists(['swarm', SAMPLE, '-n', NS])).toBe(true);
  }, 15 * MINUTES);
});
