// Upgrading a live installation (issue 36): the last recorded release
// (RELEASES.json; v0.1.0 = 5d27b78, which had no release YAML or chart yet)
// deployed with its own `npm run deploy`, its images built from its own
// Dockerfile and pushed to the testbed's registry; two Swarms of it resizing
// (hot-reloading reference workers of its own sample pool: one
// MakeBeforeBreak, one BreakBeforeMake); then this tree's release applied
// over it the way a platform team upgrades to a release YAML: `kubectl apply
// --server-side --force-conflicts` of swarm-crds.yaml and swarm.yaml (helm
// upgrade needs a Helm release to upgrade, which v0.1.0 never made). Asserted
// from the workers' own reports across the whole upgrade: no job without a
// running owner under MakeBeforeBreak, none with two under BreakBeforeMake;
// status there at every look, its generation never going back, never Ready
// with a job uncovered; and spec.failover, new in the schema since v0.1.0,
// pruned before and kept after.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Swarm } from '../../lib/api/types.js';
import { resyncPingEvent } from '../../lib/events/ping.js';
import { parse } from '../../lib/workerconfig/index.js';
import { apiClients } from '../harness/cluster-fixtures.js';
import { awaitKnativeInBackground } from '../harness/knative-background.js';
import { deployPrevious, previousRelease, pushArchive } from '../harness/previous-release.js';
import { installKnative, kubectl, SYSTEM_NAMESPACE, undeploySwarm, uninstallSwarmAndKnative } from '../harness/real-knative.js';
import { cutAndPushRelease, installationReady, RELEASE_E2E, type PushedRelease } from '../harness/release-install.js';
import { postEvent, untilSourceWatches } from '../harness/swarm-on-knative.js';
import { recordWorkerPool, runningExactlyOnce, sampleSwarmYaml, swarmSettled } from '../harness/worker-pool.js';
import { startRegistry, type LocalRegistry } from '../registry/local-registry.js';
import type { WorkerPodsRecorder } from '../support/coverage-recorder/recorder.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const realNode = inject('realNode');
const workDir = inject('clusterWorkDir');
const MINUTES = 60_000;
const progress = (line: string) => process.stderr.write(`[upgrade-e2e] ${line}\n`);

interface Live {
  readonly namespace: string;
  readonly handoff: 'MakeBeforeBreak' | 'BreakBeforeMake';
  readonly jobs: readonly string[];
  workers?: WorkerPodsRecorder;
}
const LIVE: Live[] = [
  { namespace: 'upgrade-mbb', handoff: 'MakeBeforeBreak', jobs: seedStreams },
  { namespace: 'upgrade-bbm', handoff: 'BreakBeforeMake', jobs: seedStreams.slice(0, 12) },
];

/** The previous release's own sample pool (knative/samples/statefulset.yaml of its tree) in `namespace`, at 2, running `image`. */
async function previousPool(tree: string, namespace: string, image: string): Promise<string> {
  type Doc = { kind: string; metadata: object; spec: { replicas?: number; template: { spec: { containers: { name: string; image: string }[] } } } };
  const docs = parseAllDocuments(await readFile(join(tree, 'knative', 'samples', 'statefulset.yaml'), 'utf8')).map((d) => d.toJS() as Doc);
  for (const doc of docs) {
    doc.metadata = { ...doc.metadata, namespace };
    if (doc.kind !== 'StatefulSet') continue;
    doc.spec.replicas = 2;
    for (const c of doc.spec.template.spec.containers) if (c.name === 'worker') c.image = image;
  }
  return docs.map((d) => stringify(d)).join('---\n');
}

async function settled(live: Live, replicas: number): Promise<void> {
  const { readSwarm, core } = apiClients(kubeconfig, live.namespace);
  await eventually(`${live.namespace}: settled on ${replicas} workers`, async () => {
    const cm = await core.readNamespacedConfigMap({ namespace: live.namespace, name: 'swarm-worker-config' });
    return swarmSettled(await readSwarm('swarm-worker'), parse(cm.data?.['config.yml'] ?? ''), replicas) || undefined;
  }, 5 * MINUTES, 1000);
  await runningExactlyOnce(live.workers!, live.jobs, replicas, { timeoutMs: 3 * MINUTES });
}

/** What the API server would store for spec.failover on `live`'s Swarm (a server-side dry run): pruned unless the schema has it. */
async function failoverKept(live: Live): Promise<boolean> {
  const out = await kubectl(kubeconfig, ['patch', 'swm', 'swarm-worker', '-n', live.namespace, '--type', 'merge', '--dry-run=server', '-o', 'json', '-p', '{"spec":{"failover":{"leaseSeconds":15}}}']);
  return (JSON.parse(out) as Swarm).spec.failover?.leaseSeconds === 15;
}

/** The image the Knative Service `name` serves: its latest Ready Revision's. */
async function servedImage(name: string): Promise<string | undefined> {
  const revision = (await kubectl(kubeconfig, ['get', 'ksvc', name, '-n', SYSTEM_NAMESPACE, '-o', 'jsonpath={.status.latestReadyRevisionName}'])).trim();
  if (!revision) return undefined;
  return (await kubectl(kubeconfig, ['get', 'revision', revision, '-n', SYSTEM_NAMESPACE, '-o', 'jsonpath={.spec.containers[0].image}'])).trim();
}

describe.skipIf(!realNode || !RELEASE_E2E)('upgrading from the last recorded release with live, resizing Swarms (real Knative, the real node); SWARM_E2E_RELEASE=1, as CI runs it)', () => {
  let registry: LocalRegistry | undefined;
  let dir: string | undefined;
  let release: PushedRelease;
  let ingress = '';
  let prunedBefore: boolean[] = [];
  let previousVersion = '';

  const resync = async (): Promise<void> => {
    for (const live of LIVE) await postEvent(`${ingress}/${SYSTEM_NAMESPACE}/swarm`, resyncPingEvent({ namespace: live.namespace })).catch(() => undefined);
  };

  beforeAll(async () => {
    const started = Date.now();
    const background = inject('knativeInstall');
    if (background) await awaitKnativeInBackground(background.dir, progress);
    else if (!(await kubectl(kubeconfig, ['get', 'deployment', 'mt-broker-ingress', '-n', 'knative-eventing', '--ignore-not-found', '-o', 'name'])).trim()) {
      await installKnative(workDir, { kubeconfig, progress });
    }
    // From nothing but Knative: what an earlier file installed goes, the CRD with it (the previous release brings its own).
    await undeploySwarm(kubeconfig, progress);
    registry = await startRegistry(progress, { forNode: true });
    const previous = await previousRelease(progress);
    previousVersion = previous.version;
    // By digest, as the release YAMLs name images: Knative's controller resolves a tag to a digest itself,
    // from its pod, which cannot reach this loopback registry (containerd, on the host, can).
    const pushed = async (image: 'functions' | 'worker', name: string) =>
      `${registry!.address}/swarm/${name}@${await pushArchive(previous.images[image].archive, `${registry!.address}/swarm/${name}:${previous.version}`)}`;
    const functions = await pushed('functions', 'swarm');
    const worker = await pushed('worker', 'swarm-worker');
    dir = await mkdtemp(join(tmpdir(), 'swarm-upgrade-e2e-'));
    release = await cutAndPushRelease(registry.address, '0.2.0-e2e', dir, progress);

    for (const live of LIVE) await kubectl(kubeconfig, ['create', 'namespace', live.namespace]);
    await deployPrevious(previous, kubeconfig, functions, LIVE.map((l) => l.namespace), progress);
    // Its dead-letter Service names gcr.io's event_display, which nothing here can pull: the release's, from the registry.
    await kubectl(kubeconfig, ['patch', 'ksvc', 'swarm-dead-letter', '-n', SYSTEM_NAMESPACE, '--type', 'json', '-p', JSON.stringify([{ op: 'replace', path: '/spec/template/spec/containers/0/image', value: release.refs.eventDisplay }])]);
    await installationReady(kubeconfig, progress);
    ingress = `http://${(await kubectl(kubeconfig, ['get', 'service', 'broker-ingress', '-n', 'knative-eventing', '-o', 'jsonpath={.spec.clusterIP}'])).trim()}`;
    for (const live of LIVE) {
      await untilSourceWatches(kubeconfig, live.namespace, true, progress);
      live.workers = await recordWorkerPool(kubeconfig, live.namespace);
      await kubectl(kubeconfig, ['apply', '-f', '-'], await previousPool(previous.tree, live.namespace, worker));
      await kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(live.namespace, live.jobs, { policy: 'None', handoff: live.handoff, replicas: 2 }));
    }
    const pinging = setInterval(() => void resync(), 10_000);
    try {
      for (const live of LIVE) await settled(live, 2);
    } finally {
      clearInterval(pinging);
    }
    prunedBefore = await Promise.all(LIVE.map(failoverKept));
    progress(`v${previous.version} serving both Swarms in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }, 40 * MINUTES);

  afterAll(async () => {
    for (const live of LIVE) live.workers?.stop();
    await registry?.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
    if (basename(workDir).startsWith('test-')) return;
    for (const live of LIVE) await kubectl(kubeconfig, ['delete', 'namespace', live.namespace, '--wait=false']).catch(() => undefined);
    await uninstallSwarmAndKnative(kubeconfig, progress, { waitForNamespaces: true });
  }, 15 * MINUTES);

  it(`kubectl apply of the new release while both resize: no job uncovered under MakeBeforeBreak, none doubly owned under BreakBeforeMake, status continuous, the new schema field kept`, async () => {
    expect(prunedBefore, `spec.failover under v${previousVersion}'s CRD`).toEqual([false, false]);
    const from = Date.now();
    const looks: { namespace: string; status: Swarm['status']; generation?: number }[] = [];
    let looking = true;
    const watchStatus = (async () => {
      while (looking) {
        for (const live of LIVE) {
          const s = await apiClients(kubeconfig, live.namespace).readSwarm('swarm-worker').catch(() => undefined);
          if (s) looks.push({ namespace: live.namespace, status: s.status, generation: s.metadata?.generation });
        }
        await new Promise((r) => setTimeout(r, 1000));
      }
    })();
    const pinging = setInterval(() => void resync(), 10_000);
    try {
      for (const live of LIVE) await kubectl(kubeconfig, ['-n', live.namespace, 'scale', 'swm/swarm-worker', '--replicas', '3']);
      // The upgrade, mid-resize. --force-conflicts: npm run deploy applied these objects server-side as its own field manager.
      await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', join(release.dir, 'swarm-crds.yaml')]);
      await kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/swarms.k8slab.info']);
      await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', join(release.dir, 'swarm.yaml')]);
      progress(`applied v${release.version} over v${previousVersion}`);
      for (const name of ['swarm-assign', 'swarm-restart']) {
        await eventually(`${name} serving ${release.refs.functions}`, async () => (await servedImage(name)) === release.refs.functions, 5 * MINUTES, 1000);
      }
      await installationReady(kubeconfig, progress);
      for (const live of LIVE) await settled(live, 3);
      // And a resize under the new release alone.
      for (const live of LIVE) await kubectl(kubeconfig, ['-n', live.namespace, 'scale', 'swm/swarm-worker', '--replicas', '2']);
      for (const live of LIVE) await settled(live, 2);
    } finally {
      clearInterval(pinging);
      looking = false;
      await watchStatus;
    }
    const to = Date.now();
    const [mbb, bbm] = LIVE.map((live) => live.workers!.report(live.jobs, { from, to }));
    progress(`upgrade window ${((to - from) / 1000).toFixed(0)} s: MakeBeforeBreak ${mbb!.totals.uncoveredSeconds.toFixed(1)} uncovered job-s, BreakBeforeMake ${bbm!.totals.duplicateSeconds.toFixed(1)} duplicate job-s (${bbm!.totals.uncoveredSeconds.toFixed(1)} uncovered, its handoffs break first)`);
    if (mbb!.gaps.length > 0) progress(LIVE[0]!.workers!.explain([...new Set(mbb!.gaps.map((g) => g.job))], { from, to }).join('\n'));
    expect(mbb!.totals.uncoveredSeconds).toBe(0);
    expect(bbm!.totals.duplicateSeconds).toBe(0);
    // Status continuous: at every look there, its generation never going back, never Ready with a job uncovered.
    for (const live of LIVE) {
      const mine = looks.filter((l) => l.namespace === live.namespace);
      expect(mine.length).toBeGreaterThan(10);
      expect(mine.filter((l) => !l.status?.phase)).toEqual([]);
      const observed = mine.map((l) => l.status?.observedGeneration ?? 0);
      expect(observed.filter((g, i) => i > 0 && g < observed[i - 1]!)).toEqual([]);
      const lying = mine.filter((l) => l.status?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (l.status.uncoveredJobs ?? 0) > 0);
      expect(lying).toEqual([]);
    }
    expect(await Promise.all(LIVE.map(failoverKept))).toEqual([true, true]);
  }, 30 * MINUTES);
});
