// Shared test data: the seed's 27 streams and a Swarm over them.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { JobSpec } from '../../lib/assignment/types.js';
import type { Swarm, SwarmSpec } from '../../lib/api/types.js';
import type { ReconcileLog } from '../../lib/reconcilers/env.js';

export const seedStreams: string[] = readFileSync(fileURLToPath(new URL('../fixtures/seed-streams.txt', import.meta.url)), 'utf8')
  .split('\n')
  .map((l) => l.trim())
  .filter((l) => l && !l.startsWith('#'));

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
