// The schema's caps hold together with the API server's limits: the largest
// Swarm the CRD accepts (plain names) is storable in etcd, with room for
// ordinary metadata, whatever status Swarm writes for it.
import { describe, expect, it } from 'vitest';
import { KUBERNETES_LIMITS, LIMITS } from '../../lib/api/schema.js';
import type { Swarm } from '../../lib/api/types.js';
import { validateSwarm } from '../../lib/api/validate.js';

/** Room left for labels, annotations and the rest of metadata a user may add. */
const METADATA_ALLOWANCE = 128 * 1024;

function largestSwarm(): Swarm {
  const sts = 's'.repeat(LIMITS.statefulSetNameMaxLength);
  const message = '€'.repeat(LIMITS.conditionMessageMaxLength); // 3 bytes a character in UTF-8
  const condition = (type: string) => ({
    type,
    status: 'False' as const,
    observedGeneration: 999_999_999,
    lastTransitionTime: '2026-11-22T00:00:00Z',
    reason: 'RestartsPending',
    message,
  });
  return {
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name: 'n'.repeat(253), namespace: 'n'.repeat(63), generation: 999_999_999 },
    spec: {
      statefulSetName: sts,
      configMapName: 'c'.repeat(LIMITS.configMapNameMaxLength),
      configKey: 'k'.repeat(LIMITS.configKeyMaxLength),
      restart: { policy: 'Restart', handoff: 'MakeBeforeBreak', maxUnavailable: 999_999_999 },
      workload: {
        jobs: Array.from({ length: LIMITS.maxJobs }, (_, i) => ({
          name: `${i}-`.padEnd(LIMITS.jobNameMaxLength, 'x'),
          weight: LIMITS.maxWeight,
          dedicated: false,
        })),
      },
    },
    status: {
      observedGeneration: 999_999_999,
      phase: 'Updating',
      replicas: LIMITS.maxWorkers,
      readyReplicas: LIMITS.maxWorkers,
      version: 999_999_999,
      conditions: [condition('Ready'), condition('Progressing'), condition('Degraded')],
      workers: Array.from({ length: LIMITS.maxWorkers }, (_, i) => ({
        name: `${sts}-${i}`,
        jobs: LIMITS.maxJobs,
        version: 999_999_999,
        restartPending: false,
      })),
    },
  };
}

/** What the API server adds in managedFields for the status writes: one entry per worker (a map-list). */
function managedFieldsOf(swarm: Swarm): number {
  const perWorker = (swarm.status?.workers ?? []).map(
    (w) => `${JSON.stringify(`k:${JSON.stringify({ name: w.name })}`)}:{".":{},"f:jobs":{},"f:name":{},"f:restartPending":{},"f:version":{}},`,
  );
  return perWorker.join('').length + 4096;
}

describe('the largest Swarm the schema allows', () => {
  it('is valid', () => {
    expect(validateSwarm(largestSwarm()).ok).toBe(true);
  });

  it('fits in etcd with its status and managedFields, leaving room for metadata', () => {
    const swarm = largestSwarm();
    const bytes = Buffer.byteLength(JSON.stringify(swarm)) + managedFieldsOf(swarm);
    expect(bytes + METADATA_ALLOWANCE).toBeLessThan(KUBERNETES_LIMITS.etcdRequestBytes);
  });

  it('does not fit client-side apply’s 256 KiB last-applied annotation: docs/operations.md says --server-side', () => {
    const { status: _status, ...applied } = largestSwarm();
    expect(Buffer.byteLength(JSON.stringify(applied))).toBeGreaterThan(KUBERNETES_LIMITS.annotationsBytes);
  });
});
