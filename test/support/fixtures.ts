// Shared test data: the seed's 27 streams and a Swarm over them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JobSpec } from '../../lib/assignment/types.js';
import type { Swarm } from '../../lib/api/types.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';

type ReconcileLog = ReconcileEnv['log'];
import { MemoryKube } from './memory-kube.js';

export const seedStreams: string[] = readFileSync(fileURLToPath(new URL('../fixtures/seed-streams.txt', import.meta.url)), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

type SwarmSpec = Swarm['spec'];

export function swarmOf(spec: Partial<SwarmSpec> & { jobs?: JobSpec[] } = {}, name = 'swarm', namespace = 'ns'): Swarm {
  const { jobs, ...rest } = spec;
  return {
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name, namespace },
    spec: {
      statefulSetName: 'swarm-worker',
      configMapName: 'swarm-worker-config',
      workload: { jobs: jobs ?? seedStreams },
      ...rest,
    },
  };
}

/** A ReconcileEnv log that drops everything. */
export const silentLog: ReconcileLog = { info() {}, warn() {}, debug() {} };

/** The stubbed client holding a Swarm `swarm` over StatefulSet `swarm-worker` with `replicas` Ready pods, and a reconcile env over it. */
export function stubWorld(replicas = 2, spec: Parameters<typeof swarmOf>[0] = {}, log: ReconcileLog = silentLog): { kube: MemoryKube; env: ReconcileEnv } {
  const kube = new MemoryKube();
  kube.addSwarm(swarmOf(spec));
  kube.setStatefulSet('ns', 'swarm-worker', replicas);
  for (let i = 0; i < replicas; i++) kube.startPod('ns', 'swarm-worker', i);
  return { kube, env: { kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log } };
}
