// Whether a real pool's workers do failure detection (docs/worker-protocol.md
// §8, docs/failure-detection.md), read from the API as Swarm reads it: each
// live worker pod's acknowledgement announces protocol 2, held by the pod's
// uid, and its `<pod>.heartbeat` Lease, held by the same uid with the
// published lease length, was renewed within that length; and the pool's
// readiness probe turns a pod NotReady no sooner than the renew deadline (W30).
import { AppsV1Api, CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { FAILOVER_PROTOCOL, heartbeatLeaseName, minimumProbeWindowSeconds, PROTOCOL_ANNOTATION } from '../../lib/workerconfig/index.js';
import { eventually } from '../support/timeline.js';
import { apiClients } from './cluster-fixtures.js';
import { WORKER_SELECTOR } from './worker-pool.js';

/** Each live worker pod, and what is wrong with its failure detection ('' when nothing). */
export async function heartbeatProblems(kubeconfig: string, namespace: string, leaseSeconds: number): Promise<Record<string, string>> {
  const { kc, core } = apiClients(kubeconfig, namespace);
  const leases = kc.makeApiClient(CoordinationV1Api);
  const read = (name: string): Promise<V1Lease | undefined> => leases.readNamespacedLease({ namespace, name }).catch(() => undefined);
  const pods = (await core.listNamespacedPod({ namespace, labelSelector: WORKER_SELECTOR })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const problems: Record<string, string> = {};
  for (const pod of pods) {
    const name = pod.metadata!.name!;
    const uid = pod.metadata!.uid;
    const [ack, heartbeat] = [await read(name), await read(heartbeatLeaseName(name))];
    const wrong: string[] = [];
    if (ack?.spec?.holderIdentity !== uid || ack?.metadata?.annotations?.[PROTOCOL_ANNOTATION] !== FAILOVER_PROTOCOL) {
      wrong.push(`acknowledgement: holder ${ack?.spec?.holderIdentity === uid ? 'this pod' : 'not this pod'}, protocol ${ack?.metadata?.annotations?.[PROTOCOL_ANNOTATION]}`);
    }
    const renewed = heartbeat?.spec?.renewTime ? new Date(heartbeat.spec.renewTime).getTime() : undefined;
    if (!heartbeat) wrong.push('no heartbeat Lease');
    else if (heartbeat.spec?.holderIdentity !== uid) wrong.push('heartbeat held by another uid');
    else if (heartbeat.spec?.leaseDurationSeconds !== leaseSeconds) wrong.push(`heartbeat leaseDurationSeconds ${heartbeat.spec?.leaseDurationSeconds}`);
    else if (renewed === undefined || Date.now() - renewed > leaseSeconds * 1000) wrong.push(`heartbeat not renewed within ${leaseSeconds} s`);
    problems[name] = wrong.join('; ');
  }
  return problems;
}

/**
 * Waits (a bound on a failure: a worker announces protocol 2 from its first
 * renewal after failover.yml reached its volume) until every live worker pod
 * heartbeats; returns the last reading, for the test to assert.
 */
export async function heartbeating(kubeconfig: string, namespace: string, leaseSeconds: number, timeoutMs = 60_000): Promise<Record<string, string>> {
  let last: Record<string, string> = {};
  await eventually(`${namespace}: every worker heartbeating`, async () => {
    last = await heartbeatProblems(kubeconfig, namespace, leaseSeconds);
    return Object.values(last).every((p) => p === '') ? true : undefined;
  }, timeoutMs, 500).catch(() => undefined);
  return last;
}

/** The StatefulSet's worker readiness probe window, (failureThreshold − 1) × periodSeconds, and the least W30 allows for `leaseSeconds`. */
export async function probeWindow(kubeconfig: string, namespace: string, statefulSet: string, leaseSeconds: number): Promise<{ window: number | undefined; least: number }> {
  const apps = apiClients(kubeconfig, namespace).kc.makeApiClient(AppsV1Api);
  const sts = await apps.readNamespacedStatefulSet({ namespace, name: statefulSet });
  const probe = sts.spec?.template.spec?.containers.find((c) => c.name === 'worker')?.readinessProbe;
  // Kubernetes' defaults: failureThreshold 3, periodSeconds 10. No probe: no window at all.
  const window = probe ? ((probe.failureThreshold ?? 3) - 1) * (probe.periodSeconds ?? 10) : undefined;
  return { window, least: minimumProbeWindowSeconds(leaseSeconds) };
}
