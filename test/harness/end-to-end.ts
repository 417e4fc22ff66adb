// One end-to-end world on the real cluster, as the e2e files share it: Swarm
// on real Knative (deployed once per cluster, swarm-on-knative.ts), the test's
// namespace enabled for it, the reference worker's image imported into the
// node, and recorders of pods and of what the workers report.
import { inject } from 'vitest';
import type { WorkerPodsRecorder } from '../support/coverage-recorder/recorder.js';
import { Timeline } from '../support/timeline.js';
import { kubectl } from './swarm-install.js';
import { releaseNamespace, serveNamespace, swarmOnKnative, type SwarmOnKnative } from './swarm-on-knative.js';
import { recordWorkerPool } from './worker-pool.js';

export interface EndToEnd {
  swarm: SwarmOnKnative;
  timeline: Timeline;
  workers: WorkerPodsRecorder;
  workerImage: string;
  stop(): Promise<void>;
}

export async function startEndToEnd(options: {
  kubeconfig: string;
  namespace: string;
  realNode: string;
  /** Pings the namespace this often (the shipped PingSource's period is five minutes; default none but it). */
  resyncEveryMs?: number;
  /** The cluster's work directory (Knative's install files); default, inside vitest: the global setup's `inject('clusterWorkDir')`. */
  workDir?: string;
  /** The background install of Knative to wait for, or null for none; default, inside vitest: `inject('knativeInstall')`. */
  background?: { dir: string } | null;
}): Promise<EndToEnd> {
  const { kubeconfig, namespace } = options;
  if (!options.realNode) throw new Error("the end-to-end tests run Knative and the reference worker as real pods: they need the cluster's real node (SWARM_REAL_NODE=0 has none)");
  // inject() works only inside vitest: a script (bench/pools.ts) passes both.
  const workDir = options.workDir ?? inject('clusterWorkDir');
  const background = options.background !== undefined ? options.background : inject('knativeInstall');
  const swarm = await swarmOnKnative({ kubeconfig, workDir, background });
  await kubectl(kubeconfig, ['create', 'namespace', namespace]);
  const timeline = await Timeline.start(kubeconfig, namespace);
  const workers = await recordWorkerPool(kubeconfig, namespace);
  await serveNamespace(kubeconfig, namespace);
  const pinging = options.resyncEveryMs ? swarm.pinging(namespace, options.resyncEveryMs) : undefined;
  return {
    swarm,
    timeline,
    workers,
    workerImage: swarm.workerImage,
    async stop() {
      pinging?.stop();
      timeline.stop();
      workers.stop();
      await releaseNamespace(kubeconfig, namespace);
    },
  };
}
