// Vitest globalSetup of the integration project: a real control plane for
// the run. If `npm run cluster:up` left a healthy cluster in .swarm/, the run
// reuses it (and leaves it running); otherwise, or with SWARM_FRESH_CLUSTER=1,
// it starts a fresh cluster in .swarm/test-<pid>/ and stops and deletes it on
// teardown. A watchdog stops that cluster even if the runner is killed.
//
// Tests read the admin kubeconfig path with `inject('kubeconfig')` (or the
// SWARM_KUBECONFIG environment variable) and kubectl with `inject('kubectl')`.
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { ALL_TOOLS } from './build.js';
import { binPath, defaultWorkDir, ensureBuilt, healthyCluster, startCluster } from './cluster.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the run's cluster. */
    kubeconfig: string;
    /** Absolute path of the pinned kubectl binary. */
    kubectl: string;
  }
}

const progress = (line: string): void => {
  process.stderr.write(`[controlplane] ${line}\n`);
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Everything the integration tier runs, the Knative adapter included, built up front with progress.
  await ensureBuilt(progress, ALL_TOOLS);
  const provide = (kubeconfig: string): void => {
    project.provide('kubeconfig', kubeconfig);
    project.provide('kubectl', binPath('kubectl'));
    process.env.SWARM_KUBECONFIG = kubeconfig;
  };

  if (process.env.SWARM_FRESH_CLUSTER !== '1') {
    const reusable = await healthyCluster(defaultWorkDir);
    if (reusable) {
      progress(`reusing the running cluster at ${reusable.server} (SWARM_FRESH_CLUSTER=1 for a fresh one)`);
      provide(reusable.kubeconfigPath);
      return async () => {};
    }
  }

  const cluster = await startCluster({
    workDir: join(defaultWorkDir, `test-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
    onProgress: progress,
  });
  provide(cluster.kubeconfigPath);
  return () => cluster.stop();
}
