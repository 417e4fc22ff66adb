// The original operator (bench:coverage's peer, test/harness/original-operator.ts)
// reconciles at all on the local cluster: on KWOK pods (no real node needed) it
// writes the worker ConfigMap in the format the reference worker reads, and on a
// scale-up rewrites it and restarts the old workers. It leaves the CRD alone:
// its own has the same name as Swarm's, which other tests install; without its
// own it logs its CRD writes as failed and works on (they come after the
// ConfigMap's). Skipped when the original cannot be built here (the Go module
// proxy refuses it: set SWARM_ORIGINAL_GIT_DIR, see test/controlplane/README.md).
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { parse, type WorkerConfig } from '../../lib/workerconfig/index.js';
import { originalOperator } from '../controlplane/build.js';
import { FAKE_NODE_SELECTOR, FAKE_NODE_TOLERATION, defaultWorkDir } from '../controlplane/cluster.js';
import { kubectl } from '../harness/swarm-install.js';
import { manifestIn, startOriginalOperator, withStatefulSetAppLabel, type RunningOriginalOperator } from '../harness/original-operator.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const kc = new KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(CoreV1Api);
const NS = `original-${process.pid}`;

let built: { binary: string; moduleDir: string } | undefined;
let whyNot = '';
let operator: RunningOriginalOperator | undefined;

beforeAll(async () => {
  try {
    built = await originalOperator();
  } catch (error) {
    whyNot = error instanceof Error ? error.message : String(error);
    return;
  }
  await kubectl(kubeconfig, ['create', 'namespace', NS]);
  const shipped = await readFile(join(built.moduleDir, 'k8s', 'configmap.yaml'), 'utf8');
  await kubectl(kubeconfig, ['apply', '-f', '-'], manifestIn(shipped, 'ConfigMap', 'swarm-worker-config', NS));
});

afterAll(async () => {
  await operator?.stop();
  if (built) await kubectl(kubeconfig, ['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

// Fake pods: KWOK runs them Running and Ready with an IP, which is all the original looks at.
const pool = (replicas: number) =>
  withStatefulSetAppLabel(`apiVersion: apps/v1
kind: StatefulSet
metadata: {name: swarm-worker, namespace: ${NS}}
spec:
  serviceName: swarm-worker
  replicas: ${replicas}
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: swarm-worker}}
  template:
    metadata: {labels: {app: swarm-worker}}
    spec:
      nodeSelector: ${JSON.stringify(FAKE_NODE_SELECTOR)}
      tolerations: [${JSON.stringify(FAKE_NODE_TOLERATION)}]
      containers: [{name: worker, image: swarm-worker}]
`);

async function workerConfig(): Promise<WorkerConfig | undefined> {
  const cm = await core.readNamespacedConfigMap({ name: 'swarm-worker-config', namespace: NS });
  try {
    return parse(cm.data?.['config.yml'] ?? '');
  } catch {
    return undefined; // its placeholder (`workloads:` without a version) until the first write
  }
}

const podUids = async () =>
  Object.fromEntries(
    (await core.listNamespacedPod({ namespace: NS, labelSelector: 'app=swarm-worker' })).items
      .filter((p) => !p.metadata?.deletionTimestamp)
      .map((p) => [p.metadata!.name!, p.metadata!.uid!]),
  );

describe('the original operator on the local cluster', () => {
  it('writes the worker ConfigMap, and on a scale-up rewrites it and restarts the old workers', async (ctx) => {
    if (!built) ctx.skip(`the original operator cannot be built here: ${whyNot}`);
    await kubectl(kubeconfig, ['apply', '-f', '-'], pool(2));
    operator = await startOriginalOperator({
      binary: built!.binary,
      kubeconfig,
      namespace: NS,
      jobs: seedStreams,
      workDir: join(defaultWorkDir, 'e2e', NS),
    });

    const first = await eventually('the first assignment, over 2 workers', async () => {
      const config = await workerConfig();
      return config && Object.keys(config.workloads).length === 2 ? config : undefined;
    });
    expect(Object.keys(first.workloads).sort()).toEqual(['swarm-worker-0', 'swarm-worker-1']);
    // Its chunking (bench/peers/chunking.ts): at 2 workers one stream lands on both and one on neither.
    const assigned = Object.values(first.workloads).flatMap((share) => share.jobs);
    expect(assigned).toHaveLength(seedStreams.length);
    expect(new Set(assigned).size).toBe(seedStreams.length - 1);

    const before = await eventually('both pods seen', async () => {
      const uids = await podUids();
      return Object.keys(uids).length === 2 ? uids : undefined;
    });
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/swarm-worker', '--replicas', '3']);
    const second = await eventually('a newer assignment over 3 workers', async () => {
      const config = await workerConfig();
      return config && config.version > first.version && Object.keys(config.workloads).length === 3 ? config : undefined;
    });
    expect(new Set(Object.values(second.workloads).flatMap((share) => share.jobs))).toEqual(new Set(seedStreams));
    // It deletes the workers that were there before (after 4 s × (1 + ordinal)), and the StatefulSet replaces them.
    await eventually(
      'swarm-worker-0 and -1 replaced',
      async () => {
        const now = await podUids();
        return ['swarm-worker-0', 'swarm-worker-1'].every((name) => now[name] && now[name] !== before[name]) || undefined;
      },
      120_000,
    );
  });
});
