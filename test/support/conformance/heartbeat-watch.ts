// The heartbeat Lease a protocol-2 worker renews (docs/worker-protocol.md W25),
// as the runner sees it: every state the API server announces, and what is
// wrong with one against the published lease length.
import * as k8s from '@kubernetes/client-node';
import { HEARTBEAT_LABEL, SWARM_LABEL, heartbeatLeaseName } from '../../../lib/workerconfig/index.js';

export interface HeartbeatWatch {
  /** Every state seen, oldest first, with when the runner saw it (ms, wall clock). */
  readonly states: { lease: k8s.V1Lease; seenAt: number }[];
  error(): unknown;
  abort(): void;
}

export async function watchHeartbeat(kc: k8s.KubeConfig, namespace: string, pod: string): Promise<HeartbeatWatch> {
  const states: HeartbeatWatch['states'] = [];
  let failed: unknown;
  const watch = await new k8s.Watch(kc).watch(
    `/apis/coordination.k8s.io/v1/namespaces/${namespace}/leases`,
    { fieldSelector: `metadata.name=${heartbeatLeaseName(pod)}` },
    (phase, lease: k8s.V1Lease) => {
      if (phase === 'ADDED' || phase === 'MODIFIED') states.push({ lease, seenAt: Date.now() });
    },
    (err) => (failed = err),
  );
  return { states, error: () => failed, abort: () => watch.abort() };
}

/** The renewTime as the API server returned it (the client may parse it into a Date). */
export function renewTimeOf(lease: k8s.V1Lease): string | undefined {
  const t = lease.spec?.renewTime as unknown;
  if (t instanceof Date) return t.toISOString();
  return typeof t === 'string' ? t : undefined;
}

/** When this heartbeat, as renewed, expires (ms since the epoch); undefined if it cannot tell. */
export function expiryOf(lease: k8s.V1Lease): number | undefined {
  const renewed = Date.parse(renewTimeOf(lease) ?? '');
  const seconds = lease.spec?.leaseDurationSeconds;
  return Number.isNaN(renewed) || !seconds ? undefined : renewed + seconds * 1000;
}

/**
 * What is wrong with a heartbeat Lease (W25), or undefined when it is right.
 * (The renewTime's MicroTime form is the API server's to check: it refuses
 * any other.)
 */
export function heartbeatMismatch(lease: k8s.V1Lease, leaseSeconds: number, who: { uid: string; pool: string }): string | undefined {
  const labels = lease.metadata?.labels ?? {};
  const wrong: string[] = [];
  if (lease.spec?.holderIdentity !== who.uid) wrong.push(`holder ${lease.spec?.holderIdentity} (want ${who.uid})`);
  if (labels[HEARTBEAT_LABEL] !== who.pool) wrong.push(`label ${HEARTBEAT_LABEL}=${labels[HEARTBEAT_LABEL]} (want ${who.pool})`);
  if (labels[SWARM_LABEL] !== undefined) wrong.push(`label ${SWARM_LABEL} set (the event source would deliver every renewal)`);
  if (lease.spec?.leaseDurationSeconds !== leaseSeconds) wrong.push(`leaseDurationSeconds ${lease.spec?.leaseDurationSeconds} (want ${leaseSeconds})`);
  const renewTime = renewTimeOf(lease);
  if (renewTime === undefined || Number.isNaN(Date.parse(renewTime))) wrong.push(`renewTime ${renewTime}`);
  return wrong.length ? wrong.join('; ') : undefined;
}
