// One end-to-end world on the real cluster, as the e2e files share it: Swarm
// installed, a namespace enabled, the ApiServerSource adapter and both
// functions running (local Knative), the worker image imported into the node,
// and recorders of pods and of what the workers report.
import { join } from 'node:path';
import type { Delivery } from '../../dev/broker/local-broker.js';
import { defaultWorkDir } from '../controlplane/cluster.js';
import type { WorkerPodsRecorder } from '../support/coverage-recorder/recorder.js';
import { Timeline } from '../support/timeline.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from './local-knative.js';
import { ensureWorkerImage } from './worker-image.js';
import { recordWorkerPool } from './worker-pool.js';

export interface EndToEnd {
  local: LocalKnative;
  timeline: Timeline;
  workers: WorkerPodsRecorder;
  workerImage: string;
  delivered: Delivery[];
  stop(): Promise<void>;
}

export async function startEndToEnd(options: {
  kubeconfig: string;
  namespace: string;
  clusterWorkDir: string;
  realNode: string;
  /** Instances of each function (default 1). */
  instances?: number;
  /** The resync ping's period (PingSource's stand-in; default none). */
  resyncEveryMs?: number;
}): Promise<EndToEnd> {
  const { kubeconfig, namespace } = options;
  if (!options.realNode) throw new Error('the end-to-end tests run the reference worker as real pods: they need the cluster\'s real node (SWARM_REAL_NODE=0 has none)');
  const workerImage = await ensureWorkerImage(options.clusterWorkDir, (line) => process.stderr.write(`[image] ${line}\n`));
  await installSwarm(kubeconfig);
  await enableNamespace(kubeconfig, namespace);
  const timeline = await Timeline.start(kubeconfig, namespace);
  const workers = await recordWorkerPool(kubeconfig, namespace);
  const delivered: Delivery[] = [];
  const local = await startLocalKnative({
    adminKubeconfig: kubeconfig,
    namespace,
    workDir: join(defaultWorkDir, 'e2e', namespace),
    backoffScale: 0.2,
    onDelivery: (d) => delivered.push(d),
    ...(options.instances ? { instances: options.instances } : {}),
    ...(options.resyncEveryMs ? { resyncEveryMs: options.resyncEveryMs } : {}),
  });
  return {
    local,
    timeline,
    workers,
    workerImage,
    delivered,
    async stop() {
      timeline.stop();
      workers.stop();
      await local.stop();
      await kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
    },
  };
}
