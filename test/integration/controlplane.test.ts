// Smoke test of the local control plane: the behaviours Swarm relies on come
// from the real API server and controllers, not from a stand-in.
import * as k8s from '@kubernetes/client-node';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { FAKE_NODE_SELECTOR, FAKE_NODE_TOLERATION } from '../controlplane/components.js';
import { eventually } from '../support/timeline.js';

const kc = new k8s.KubeConfig();
kc.loadFromFile(inject('kubeconfig'));
const core = kc.makeApiClient(k8s.CoreV1Api);
const apps = kc.makeApiClient(k8s.AppsV1Api);
const rbac = kc.makeApiClient(k8s.RbacAuthorizationV1Api);

const namespace = `cp-smoke-${randomBytes(3).toString('hex')}`;


function statusCode(error: unknown): number | undefined {
  return error instanceof k8s.ApiException ? error.code : undefined;
}

async function apiError(call: Promise<unknown>): Promise<number | undefined> {
  try {
    await call;
    return undefined;
  } catch (error) {
    return statusCode(error) ?? -1;
  }
}

function runningAndReady(pod: k8s.V1Pod): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True')
  );
}

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
});

afterAll(async () => {
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
});

describe('local control plane', () => {
  it('runs StatefulSet pods to Running and Ready, honours uid preconditions, and recreates deleted pods', async () => {
    const labels = { app: 'smoke-workers' };
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: 'workers' },
        spec: {
          replicas: 2,
          serviceName: 'workers',
          podManagementPolicy: 'Parallel',
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            // kwok simulates the kubelet on its tainted fake nodes: the image is never pulled.
            spec: {
              nodeSelector: { ...FAKE_NODE_SELECTOR },
              tolerations: [{ ...FAKE_NODE_TOLERATION }],
              containers: [{ name: 'worker', image: 'registry.invalid/swarm-worker:smoke' }],
            },
          },
        },
      },
    });

    const pods = await eventually('2 pods Running and Ready', async () => {
      const list = await core.listNamespacedPod({ namespace, labelSelector: 'app=smoke-workers' });
      return list.items.filter(runningAndReady).length === 2 ? list.items : undefined;
    });
    expect(pods.map((p) => p.metadata?.name).sort()).toEqual(['workers-0', 'workers-1']);
    expect(pods.every((p) => p.spec?.nodeName?.startsWith('kwok-node-'))).toBe(true);

    const victim = pods.find((p) => p.metadata?.name === 'workers-0');
    const uid = victim?.metadata?.uid;
    expect(uid).toBeTruthy();

    const staleUid = '00000000-0000-0000-0000-000000000000';
    const refused = await apiError(
      core.deleteNamespacedPod({ namespace, name: 'workers-0', body: { preconditions: { uid: staleUid } } }),
    );
    expect(refused).toBe(409);
    const stillThere = await core.readNamespacedPod({ namespace, name: 'workers-0' });
    expect(stillThere.metadata?.uid).toBe(uid);
    expect(stillThere.metadata?.deletionTimestamp).toBeUndefined();

    await core.deleteNamespacedPod({ namespace, name: 'workers-0', body: { preconditions: { uid } } });

    const replacement = await eventually('workers-0 recreated with a new uid, Running and Ready', async () => {
      const pod = await core.readNamespacedPod({ namespace, name: 'workers-0' });
      return pod.metadata?.uid !== uid && runningAndReady(pod) ? pod : undefined;
    });
    expect(replacement.metadata?.uid).not.toBe(uid);
  });

  it('garbage-collects an object whose owner was deleted', async () => {
    const owner = await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'owner' }, data: { role: 'owner' } },
    });
    await core.createNamespacedConfigMap({
      namespace,
      body: {
        metadata: {
          name: 'owned',
          ownerReferences: [
            { apiVersion: 'v1', kind: 'ConfigMap', name: 'owner', uid: owner.metadata?.uid ?? '', controller: true },
          ],
        },
        data: { role: 'owned' },
      },
    });
    // Background propagation: the API server deletes the owner at once and
    // leaves the dependents to the garbage collector.
    await core.deleteNamespacedConfigMap({ namespace, name: 'owner', propagationPolicy: 'Background' });

    const gone = await eventually('owned ConfigMap garbage-collected', async () => {
      const code = await apiError(core.readNamespacedConfigMap({ namespace, name: 'owned' }));
      return code === 404 ? true : undefined;
    });
    expect(gone).toBe(true);
  });

  it('denies a service account what RBAC does not grant, and allows it once granted', async () => {
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'nobody' } } });
    const tokenRequest = await core.createNamespacedServiceAccountToken({
      namespace,
      name: 'nobody',
      body: { spec: { audiences: [], expirationSeconds: 600 } },
    });
    const token = tokenRequest.status?.token;
    expect(token).toBeTruthy();

    const cluster = kc.getCurrentCluster();
    const asNobody = new k8s.KubeConfig();
    asNobody.loadFromOptions({
      clusters: [{ name: 'local', server: cluster?.server ?? '', caData: cluster?.caData, skipTLSVerify: false }],
      users: [{ name: 'nobody', token }],
      contexts: [{ name: 'local', cluster: 'local', user: 'nobody' }],
      currentContext: 'local',
    });

    // Authenticated as the service account: the 403 below is authorization.
    const review = await asNobody.makeApiClient(k8s.AuthenticationV1Api).createSelfSubjectReview({ body: {} });
    expect(review.status?.userInfo?.username).toBe(`system:serviceaccount:${namespace}:nobody`);

    const nobodyCore = asNobody.makeApiClient(k8s.CoreV1Api);
    expect(await apiError(nobodyCore.listNamespacedPod({ namespace }))).toBe(403);
    expect(await apiError(nobodyCore.deleteNamespacedConfigMap({ namespace, name: 'anything' }))).toBe(403);

    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: 'pod-reader' },
        rules: [{ apiGroups: [''], resources: ['pods'], verbs: ['list'] }],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: 'nobody-reads-pods' },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'pod-reader' },
        subjects: [{ kind: 'ServiceAccount', name: 'nobody', namespace }],
      },
    });
    const allowed = await eventually('the RoleBinding to take effect', async () =>
      (await apiError(nobodyCore.listNamespacedPod({ namespace }))) === undefined ? true : undefined,
    );
    expect(allowed).toBe(true);
    // Still only what was granted.
    expect(await apiError(nobodyCore.deleteNamespacedConfigMap({ namespace, name: 'anything' }))).toBe(403);
  });
});
