// What a conformance scenario needs of the API server, made in a namespace of
// its own: the worker's ServiceAccount, Role and a token for it (the harness
// then talks to the API server as a pod would), and the scenario's objects
// (a StatefulSet whose pods never schedule, the worker ConfigMap, a Lease left
// by an earlier pod).
import * as k8s from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DIGEST_ANNOTATION, HANDOVER_ANNOTATION, HANDOVER_VALUE, SWARM_LABEL, VERSION_ANNOTATION, jobsDigest, render } from '../../../lib/workerconfig/index.js';
import type { Scenario } from './scenario.js';

export const CONFIGMAP = 'pool-config';
export const STATEFULSET = 'pool';

export interface ApiServer {
  kc: k8s.KubeConfig;
  host: string;
  port: number;
  ca: string;
}

export function apiServerOf(kubeconfig: string): ApiServer {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`${kubeconfig}: no current cluster`);
  const url = new URL(cluster.server);
  const ca = cluster.caData ? Buffer.from(cluster.caData, 'base64').toString('utf8') : readFileSync(cluster.caFile!, 'utf8');
  return { kc, host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || 443), ca };
}

export interface Prepared {
  namespace: string;
  token: string;
}

export async function prepareNamespace(api: ApiServer, scenario: Scenario, label: string, uid: string): Promise<Prepared> {
  const core = api.kc.makeApiClient(k8s.CoreV1Api);
  const rbac = api.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const apps = api.kc.makeApiClient(k8s.AppsV1Api);
  const coordination = api.kc.makeApiClient(k8s.CoordinationV1Api);
  const namespace = `conf-${label}-${randomBytes(3).toString('hex')}`.slice(0, 63);
  await core.createNamespace({ body: { metadata: { name: namespace, labels: { 'swarm.test/conformance': 'true' } } } });
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'worker' } } });
  const rules: k8s.V1PolicyRule[] = [];
  if (scenario.api?.drainAccess !== false) {
    rules.push(
      { apiGroups: ['apps'], resources: ['statefulsets'], resourceNames: [STATEFULSET], verbs: ['get'] },
      { apiGroups: [''], resources: ['configmaps'], resourceNames: [CONFIGMAP], verbs: ['get'] },
    );
  }
  if (scenario.api?.leaseAccess !== false) rules.push({ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] });
  await rbac.createNamespacedRole({ namespace, body: { metadata: { name: 'worker' }, rules } });
  await rbac.createNamespacedRoleBinding({
    namespace,
    body: { metadata: { name: 'worker' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'worker' }, subjects: [{ kind: 'ServiceAccount', name: 'worker', namespace }] },
  });
  const token = await core.createNamespacedServiceAccountToken({ name: 'worker', namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });

  if (scenario.api?.statefulSet) {
    const labels = { app: STATEFULSET };
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: STATEFULSET },
        spec: {
          replicas: scenario.api.statefulSet.replicas,
          serviceName: STATEFULSET,
          selector: { matchLabels: labels },
          // Its pods never schedule: the harness plays the pod; only the range matters.
          template: { metadata: { labels }, spec: { nodeSelector: { 'swarm.test/no-such-node': 'true' }, containers: [{ name: 'worker', image: 'registry.invalid/none' }] } },
        },
      },
    });
  }
  if (scenario.api?.configMap) await putConfigMap(api, namespace, scenario.api.configMap, scenario.api.handover === true, true);
  const stale = scenario.api?.lease;
  if (stale) {
    await coordination.createNamespacedLease({
      namespace,
      body: {
        metadata: {
          name: scenario.pod,
          labels: { ...stale.labels, [SWARM_LABEL]: STATEFULSET },
          annotations: { ...stale.annotations, [VERSION_ANNOTATION]: String(stale.version), [DIGEST_ANNOTATION]: jobsDigest(stale.jobs) },
        },
        spec: { holderIdentity: stale.holder === 'own' ? uid : stale.holder },
      },
    });
  }
  if (!token.status?.token) throw new Error('no token for the worker ServiceAccount');
  return { namespace, token: token.status.token };
}

/** Writes the worker ConfigMap (as assign does: config.yml rendered, the handover annotation when handing over). */
export async function putConfigMap(api: ApiServer, namespace: string, config: Parameters<typeof render>[0], handover: boolean, create = false): Promise<void> {
  const core = api.kc.makeApiClient(k8s.CoreV1Api);
  const body: k8s.V1ConfigMap = {
    metadata: { name: CONFIGMAP, annotations: handover ? { [HANDOVER_ANNOTATION]: HANDOVER_VALUE } : {} },
    data: { 'config.yml': render(config) },
  };
  if (create) await core.createNamespacedConfigMap({ namespace, body });
  else await core.replaceNamespacedConfigMap({ namespace, name: CONFIGMAP, body });
}

export async function deleteNamespace(api: ApiServer, namespace: string): Promise<void> {
  await api.kc.makeApiClient(k8s.CoreV1Api).deleteNamespace({ name: namespace }).catch(() => undefined);
}
