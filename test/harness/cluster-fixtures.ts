// What the KWOK-capable integration files share (SWARM_REAL_NODE=0 is enough):
// the admin API clients, a test namespace served by the local Knative stand-in
// (both functions behind the local broker and the real ApiServerSource
// adapter), and worker StatefulSets whose pods are KWOK's fake ones.
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Swarm } from '../../lib/api/types.js';
import { defaultWorkDir } from '../controlplane/cluster.js';
import { Timeline } from '../support/timeline.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from './local-knative.js';

/** The admin API clients of the control plane behind `kubeconfig`, and a reader of the Swarms in `namespace`. */
export function apiClients(kubeconfig: string, namespace: string) {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const custom = kc.makeApiClient(CustomObjectsApi);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    custom,
    readSwarm: async (name: string) => (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace, name })) as Swarm,
  };
}

export interface ServedNamespace {
  /** The functions, broker and source serving the namespace (set once the file's tests run). */
  local: LocalKnative;
  /** Every pod life and ConfigMap write in the namespace since before the functions started. */
  timeline: Timeline;
}

/**
 * For the tests of one file: Swarm installed, `namespace` enabled and watched
 * (a Timeline, and `beforeStart`), then the local Knative serving it with
 * `instances` per function; afterwards all stopped and the namespace deleted.
 */
export function servedNamespace(
  kubeconfig: string,
  namespace: string,
  options: { instances?: number; /** Runs once the namespace exists, before the functions start: a file's own watches. */ beforeStart?: () => Promise<void> } = {},
): ServedNamespace {
  const served = {} as ServedNamespace;
  beforeAll(async () => {
    await installSwarm(kubeconfig);
    await enableNamespace(kubeconfig, namespace);
    served.timeline = await Timeline.start(kubeconfig, namespace);
    await options.beforeStart?.();
    served.local = await startLocalKnative({
      adminKubeconfig: kubeconfig,
      namespace,
      workDir: join(defaultWorkDir, 'e2e', namespace),
      backoffScale: 0.2,
      ...(options.instances !== undefined ? { instances: options.instances } : {}),
    });
  });
  afterAll(async () => {
    served.timeline?.stop();
    await served.local?.stop();
    await kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
  });
  return served;
}

/**
 * StatefulSet `name` in `namespace` (pods labelled app=`name` and
 * k8slab.info/swarm=`name`, its first ordinal `start` when given) whose pods
 * are KWOK's: on its tainted fake nodes, they run nothing and acknowledge nothing.
 */
export const kwokStatefulSetYaml = (namespace: string, name: string, replicas: number, start?: number) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  serviceName: ${name}
  replicas: ${replicas}
  ${start === undefined ? '' : `ordinals: {start: ${start}}`}
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}, k8slab.info/swarm: ${name}}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 0
      containers: [{name: worker, image: ${name}}]
`;

/** Swarm `name` in `namespace` over StatefulSet `name` and ConfigMap `<name>-config`, with `spec` beside them (JSON, which kubectl applies as YAML). */
export const swarmYaml = (namespace: string, name: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name, namespace },
    spec: { statefulSetName: name, configMapName: `${name}-config`, ...spec },
  });
