// Vitest globalSetup of the integration project: a real control plane for
// the run. If `npm run cluster:up` left a healthy cluster in .swarm/, the run
// reuses it (and leaves it running); otherwise, or with SWARM_FRESH_CLUSTER=1,
// it starts a fresh cluster in .swarm/test-<pid>/ and stops and deletes it on
// teardown. A watchdog stops that cluster even if the runner is killed.
// That fresh cluster's real node must leave the machine as it found it: the
// teardown compares interfaces, iptables, mounts, cgroups, host paths and
// sysctls with a snapshot taken once the node was ours, and fails the run on
// any difference the node could have made (others may work meanwhile).
//
// Tests read the admin kubeconfig path with `inject('kubeconfig')` (or the
// SWARM_KUBECONFIG environment variable), kubectl with `inject('kubectl')`,
// the real node's name with `inject('realNode')` ('' when the cluster has
// none), the cluster's work directory with `inject('clusterWorkDir')`, and
// with `inject('knativeInstall')` the install of Knative this setup started in
// the background on a fresh cluster with a real node (the
// files Swarm on Knative serves wait for it: test/harness/swarm-on-knative.ts).
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { LOG_FILE, startKnativeInBackground, type BackgroundInstall } from '../harness/knative-background.js';
import { ALL_TOOLS } from './build.js';
import { binPath, defaultWorkDir, ensureBuilt, healthyCluster, startCluster } from './cluster.js';
import { diffSnapshots, nodeRelated, takeSnapshot } from './host-state.js';
import { NODE_IP } from './node-config.js';
import { freePort } from './ports.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Admin kubeconfig of the run's cluster. */
    kubeconfig: string;
    /** Absolute path of the pinned kubectl binary. */
    kubectl: string;
    /** The real node's name, '' when the run's cluster has none. */
    realNode: string;
    /** The run's cluster work directory (for importImages). */
    clusterWorkDir: string;
    /** Knative being installed in the background (a fresh cluster with a real node), or null. */
    knativeInstall: { dir: string; sinkPort: number } | null;
  }
}

const progress = (line: string): void => {
  process.stderr.write(`[controlplane] ${line}\n`);
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  // Everything the integration tier runs, the Knative adapter included, built up front with progress.
  await ensureBuilt(progress, ALL_TOOLS);
  const provide = (kubeconfig: string, workDir: string, realNode = ''): void => {
    project.provide('kubeconfig', kubeconfig);
    project.provide('kubectl', binPath('kubectl'));
    project.provide('realNode', realNode);
    project.provide('clusterWorkDir', workDir);
    project.provide('knativeInstall', null);
    process.env.SWARM_KUBECONFIG = kubeconfig;
  };

  if (process.env.SWARM_FRESH_CLUSTER !== '1') {
    const reusable = await healthyCluster(defaultWorkDir);
    if (reusable) {
      progress(`reusing the running cluster at ${reusable.server} (SWARM_FRESH_CLUSTER=1 for a fresh one)`);
      provide(reusable.kubeconfigPath, reusable.workDir, reusable.realNode);
      return async () => {};
    }
  }

  let before = takeSnapshot();
  const cluster = await startCluster({
    workDir: join(defaultWorkDir, `test-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
    onProgress: progress,
    // Handoffs to hot-reloading workers wait for the kubelet to update their
    // mounted ConfigMap, which it does on its sync period (default 1m): a
    // shorter one keeps each step of the tests in seconds. The benchmarks
    // measure both (bench:coverage).
    syncFrequency: '5s',
    // Once the node is ours: another cluster may have held it until then.
    onNodeLocked: () => (before = takeSnapshot()),
  });
  provide(cluster.kubeconfigPath, cluster.workDir, cluster.realNode);
  let knative: BackgroundInstall | undefined;
  if (cluster.realNode) {
    // Its minutes of waiting on pods overlap the files that need no Knative (vitest.config.ts runs them first).
    const sinkPort = await freePort('0.0.0.0'); // knative-e2e's trace sink's: pods reach it at the node's address
    knative = startKnativeInBackground({ dir: cluster.workDir, kubeconfig: cluster.kubeconfigPath, sinkEndpoint: `http://${NODE_IP}:${sinkPort}` });
    project.provide('knativeInstall', { dir: cluster.workDir, sinkPort });
    progress(`installing Knative in the background (log: ${join(cluster.workDir, LOG_FILE)})`);
  }
  return async () => {
    await knative?.stop();
    await cluster.stop();
    if (!cluster.realNode) return;
    // Only additions count: a removal is a leftover of an earlier run cleaned up now.
    const left = diffSnapshots(before, takeSnapshot()).filter((line) => nodeRelated(line) && line.split(' ')[1] === '+');
    if (left.length > 0) throw new Error(`the real node left the machine changed after cluster.stop():\n${left.join('\n')}`);
    progress('the real node left nothing behind (interfaces, iptables, mounts, cgroups, sysctls)');
  };
}

