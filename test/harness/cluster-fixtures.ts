// What the integration files over KWOK's fake worker pods share: the admin API
// clients, a test namespace served by Swarm on real Knative (its functions run
// on the real node), and worker StatefulSets whose pods are KWOK's.
import { afterAll, beforeAll, inject } from 'vitest';
import { AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Swarm } from '../../lib/api/types.js';
import { Timeline } from '../support/timeline.js';
import { kubectl } from './swarm-install.js';
import { releaseNamespace, serveNamespace, swarmOnKnative, type SwarmOnKnative } from './swarm-on-knative.js';

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
  /** Swarm on Knative serving the namespace (set once the file's tests run). */
  swarm: SwarmOnKnative;
  /** Every pod life and ConfigMap write in the namespace since before Swarm was let in. */
  timeline: Timeline;
}

/**
 * For the tests of one file: Swarm on real Knative (deployed once per cluster,
 * swarm-on-knative.ts), `namespace` created and watched (a Timeline, and
 * `beforeStart`), then enabled for Swarm; afterwards released (releaseNamespace).
 */
export function servedNamespace(
  kubeconfig: string,
  namespace: string,
  options: { /** Runs once the namespace exists, before Swarm may act in it: a file's own watches. */ beforeStart?: () => Promise<void> } = {},
): ServedNamespace {
  const served = {} as ServedNamespace;
  beforeAll(async () => {
    served.swarm = await swarmOnKnative({ kubeconfig, workDir: inject('clusterWorkDir'), background: inject('knativeInstall') });
    await kubectl(kubeconfig, ['create', 'namespace', namespace]);
    served.timeline = await Timeline.start(kubeconfig, namespace);
    await options.beforeStart?.();
    await serveNamespace(kubeconfig, namespace);
  }, 45 * 60_000);
  afterAll(async () => {
    served.timeline?.stop();
    await releaseNamespace(kubeconfig, namespace);
  });
  return served;
}

/**
 * StatefulSet `name` in `namespace` (pods labelled app=`name` and
 * k8slab.info/swarm=`name`, its first ordinal `start` when given) whose pods
 * are KWOK's: on its tainted fake nodes, they run nothing and acknowledge nothing.
 * `acknowledges`: its template declares acknowledgement (k8slab.info/acknowledges: lease),
 * for hot-reloading Swarms, whose acknowledgements the test writes (kwok-acknowledger.ts).
 */
export const kwokStatefulSetYaml = (namespace: string, name: string, replicas: number, start?: number, acknowledges = false) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}, namespace: ${namespace}}
spec:
  serviceName: ${name}
  replicas: ${replicas}
  ${start === undefined ? '' : `ordinals: {start: ${start}}`}
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}, k8slab.info/swarm: ${name}${acknowledges ? ', k8slab.info/acknowledges: lease' : ''}}}
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
