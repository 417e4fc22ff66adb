// The sample worker pool (knative/samples/statefulset.yaml: the reference
// worker as real pods mounting the real ConfigMap) in a test namespace, and
// what its workers say they run, read by the coverage recorder.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import type { Swarm } from '../../lib/api/types.js';
import type { WorkerConfig } from '../../lib/workerconfig/index.js';
import { repoRoot } from '../controlplane/cluster.js';
import { recordWorkerPods, type WorkerPodsRecorder } from '../support/coverage-recorder/recorder.js';
import { eventually } from '../support/timeline.js';

export const WORKER_POOL_SAMPLE = join(repoRoot, 'knative', 'samples', 'statefulset.yaml');
/** The same reference worker as a Deployment pool (knative/samples/deployment.yaml). */
export const DEPLOYMENT_POOL_SAMPLE = join(repoRoot, 'knative', 'samples', 'deployment.yaml');
export const WORKER_SELECTOR = 'app=swarm-worker';

type Manifest = { kind: string; metadata: Record<string, unknown>; spec: Record<string, unknown> };

/** Points the worker container of a StatefulSet at `image`, built here and imported into the node: never pulled. */
function runImage(object: Manifest, image: string): void {
  const pod = (object.spec.template as { spec: { containers: Array<{ name: string; image: string; imagePullPolicy?: string }> } }).spec;
  for (const container of pod.containers) if (container.name === 'worker') Object.assign(container, { image, imagePullPolicy: 'Never' });
}

/** Rewrites each document of a YAML stream, as one YAML stream for `kubectl apply`. */
function mapDocuments(yaml: string, edit: (object: Manifest) => void): string {
  return parseAllDocuments(yaml)
    .map((doc) => {
      const object = doc.toJS() as Manifest | null;
      if (!object) return '';
      edit(object);
      return stringify(object);
    })
    .filter(Boolean)
    .join('---\n');
}

/** A rendered manifest stream (e.g. `kubectl kustomize knative/samples`) whose worker StatefulSets run `image`. */
export function withWorkerImage(yaml: string, image: string): string {
  return mapDocuments(yaml, (object) => {
    if (object.kind === 'StatefulSet' || object.kind === 'Deployment') runImage(object, image);
  });
}

/** The Deployment pool sample in `namespace` at `replicas`, running `image` when given, for `kubectl apply`. */
export function deploymentPoolYaml(namespace: string, replicas: number, image?: string): string {
  return mapDocuments(readFileSync(DEPLOYMENT_POOL_SAMPLE, 'utf8'), (object) => {
    object.metadata = { ...object.metadata, namespace };
    if (object.kind !== 'Deployment') return;
    object.spec = { ...object.spec, replicas };
    if (image) runImage(object, image);
  });
}

/**
 * The sample's Service and StatefulSet, in `namespace` at `replicas`, running
 * `image` when given (the worker image as built, whose tag carries its content
 * hash), with `env` added to the worker container, as one YAML stream for `kubectl apply`.
 */
export function workerPoolYaml(namespace: string, replicas: number, image?: string, env: Record<string, string> = {}): string {
  return mapDocuments(readFileSync(WORKER_POOL_SAMPLE, 'utf8'), (object) => {
    object.metadata = { ...object.metadata, namespace };
    if (object.kind !== 'StatefulSet') return;
    object.spec = { ...object.spec, replicas };
    if (image) runImage(object, image);
    const containers = (object.spec.template as { spec: { containers: Array<{ name: string; env?: Array<{ name: string; value?: string }> }> } }).spec.containers;
    for (const c of containers) if (c.name === 'worker') c.env = [...(c.env ?? []), ...Object.entries(env).map(([name, value]) => ({ name, value }))];
  });
}

/** The sample Swarm over `jobs` in `namespace` (as knative/samples/swarm.yaml, with this job list; spec.failover with `leaseSeconds`). */
export function sampleSwarmYaml(
  namespace: string,
  jobs: readonly string[],
  options: { policy?: 'Restart' | 'None'; handoff?: 'MakeBeforeBreak' | 'BreakBeforeMake'; replicas?: number; pool?: 'StatefulSet' | 'Deployment'; leaseSeconds?: number } = {},
): string {
  const { policy = 'None', handoff = 'MakeBeforeBreak', replicas, pool = 'StatefulSet', leaseSeconds } = options;
  return `apiVersion: k8slab.info/v1alpha1
kind: Swarm
metadata: {name: swarm-worker, namespace: ${namespace}}
spec:
  ${pool === 'Deployment' ? 'deploymentName' : 'statefulSetName'}: swarm-worker
  configMapName: swarm-worker-config
${replicas === undefined ? '' : `  replicas: ${replicas}
`}  restart: {policy: ${policy}, handoff: ${handoff}, maxUnavailable: 1}
${leaseSeconds === undefined ? '' : `  failover: {leaseSeconds: ${leaseSeconds}}
`}  workload:
    jobs:
${jobs.map((j) => `      - ${JSON.stringify(j)}`).join('\n')}
`;
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
 * Whether the workers' own reports show, at `at`, every job in `jobs` run by
 * exactly one pod, nothing else run, and each of the `replicas` pods
 * (`<sts>-0` … `<sts>-(replicas-1)`; with statefulSetName null, any
 * `replicas` pods: a Deployment's) running at least one job.
 */
export function exactlyOnceAt(
  recorder: WorkerPodsRecorder,
  jobs: readonly string[],
  replicas: number,
  at = Date.now(),
  statefulSetName: string | null = 'swarm-worker',
): RunningExactlyOnce | undefined {
  const same = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x, i) => x === b[i]);
  const { byPod, duplicated } = recorder.running(at);
  // A Deployment's pods have generated names: any `replicas` pods (statefulSetName null).
  const pods = Array.from({ length: replicas }, (_, i) => `${statefulSetName}-${i}`).sort();
  const onPods = statefulSetName === null ? Object.keys(byPod).length === replicas : same(Object.keys(byPod).sort(), pods);
  const ok = duplicated.length === 0 && same(Object.values(byPod).flat().sort(), [...jobs].sort()) && onPods;
  return ok ? { at, byPod } : undefined;
}

/** Waits until `exactlyOnceAt` holds. */
export async function runningExactlyOnce(
  recorder: WorkerPodsRecorder,
  jobs: readonly string[],
  replicas: number,
  options: { statefulSetName?: string; timeoutMs?: number; anyPods?: boolean } = {},
): Promise<RunningExactlyOnce> {
  return eventually(
    `every job run exactly once by ${replicas} workers, by their own reports`,
    async () => exactlyOnceAt(recorder, jobs, replicas, Date.now(), options.anyPods ? null : (options.statefulSetName ?? 'swarm-worker')),
    options.timeoutMs ?? 150_000,
    200,
  );
}

/**
 * The Swarm's side of a settled step: no handoff marks left in the config, and
 * status Running at that config's version over `replicas` workers, each
 * acknowledging its share, nothing uncovered. (The pool's side — pods, rollout —
 * is each test's own.)
 */
export function swarmSettled(swarm: Swarm, config: WorkerConfig, replicas: number): boolean {
  const marks = Object.values(config.workloads).some((w) => w.releasing || w.awaiting || w.released);
  const st = swarm.status;
  return (
    !marks &&
    Object.keys(config.workloads).length === replicas &&
    st?.phase === 'Running' &&
    st.version === config.version &&
    st.uncoveredJobs === 0 &&
    st.workers?.length === replicas &&
    st.workers.every((w) => w.coverage === 'Acknowledged')
  );
}
