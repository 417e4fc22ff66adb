// The sample worker pool (knative/samples/statefulset.yaml: the reference
// worker as real pods mounting the real ConfigMap) in a test namespace, and
// what its workers say they run, read by the coverage recorder.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { repoRoot } from '../controlplane/cluster.js';
import { recordWorkerPods, type WorkerPodsRecorder } from '../support/coverage-recorder/recorder.js';
import { eventually } from '../support/timeline.js';

export const WORKER_POOL_SAMPLE = join(repoRoot, 'knative', 'samples', 'statefulset.yaml');
export const WORKER_SELECTOR = 'app=swarm-worker';

/** The sample's Service and StatefulSet, in `namespace` at `replicas`, as one YAML stream for `kubectl apply`. */
export function workerPoolYaml(namespace: string, replicas: number): string {
  return parseAllDocuments(readFileSync(WORKER_POOL_SAMPLE, 'utf8'))
    .map((doc) => {
      const object = doc.toJS() as { kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown> };
      object.metadata = { ...object.metadata, namespace };
      if (object.kind === 'StatefulSet') object.spec = { ...object.spec, replicas };
      return stringify(object);
    })
    .join('---\n');
}

export function recordWorkerPool(kubeconfig: string, namespace: string): Promise<WorkerPodsRecorder> {
  return recordWorkerPods({ kubeconfig, namespace, labelSelector: WORKER_SELECTOR, container: 'worker' });
}

export interface RunningExactlyOnce {
  /** When the workers' reports first showed it. */
  readonly at: number;
  /** Pod name → its jobs, by the workers' own reports. */
  readonly byPod: Record<string, string[]>;
}

/**
 * Waits until the workers' own reports show every job in `jobs` run by exactly
 * one live pod, nothing else run, and every one of the `replicas` pods
 * (`<sts>-0` … `<sts>-(replicas-1)`) running at least one job.
 */
export async function runningExactlyOnce(
  recorder: WorkerPodsRecorder,
  jobs: readonly string[],
  replicas: number,
  options: { statefulSetName?: string; timeoutMs?: number } = {},
): Promise<RunningExactlyOnce> {
  const sts = options.statefulSetName ?? 'swarm-worker';
  const want = [...jobs].sort();
  const pods = Array.from({ length: replicas }, (_, i) => `${sts}-${i}`).sort();
  return eventually(
    `every job run exactly once by ${replicas} workers, by their own reports`,
    async () => {
      const at = Date.now();
      const { byPod, duplicated } = recorder.running(at);
      const running = Object.values(byPod).flat().sort();
      const ok = duplicated.length === 0 && JSON.stringify(running) === JSON.stringify(want) && JSON.stringify(Object.keys(byPod).sort()) === JSON.stringify(pods);
      return ok ? { at, byPod } : undefined;
    },
    options.timeoutMs ?? 150_000,
    200,
  );
}
