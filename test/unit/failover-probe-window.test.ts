// W30 (docs/worker-protocol.md §8) is a rule for the pool's manifest, not for
// the worker's code: the sample pool whose Swarm sets spec.failover turns a
// pod NotReady no sooner than the renew deadline after its readiness probe
// first fails, with the clocks' drift margin (docs/failure-detection.md).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { minimumProbeWindowSeconds } from '../../lib/workerconfig/index.js';

const SAMPLES = join(import.meta.dirname, '..', '..', 'knative', 'samples');
interface Manifest {
  kind?: string;
  metadata: { name: string };
  spec: {
    statefulSetName: string;
    failover: { leaseSeconds: number };
    template: { spec: { containers: { readinessProbe: { failureThreshold: number; periodSeconds?: number } }[] } };
  };
}
const documents = (file: string) => parseAllDocuments(readFileSync(join(SAMPLES, file), 'utf8')).map((d) => d.toJS() as Manifest);

describe('W30: the sample pool with failover', () => {
  it('probes readiness over a window no shorter than the renew deadline, with the drift margin', () => {
    const swarm = documents('swarm.yaml').find((d) => d?.kind === 'Swarm')!;
    const leaseSeconds = swarm.spec.failover.leaseSeconds;
    const pool = documents('statefulset.yaml').find((d) => d?.kind === 'StatefulSet' && d.metadata.name === swarm.spec.statefulSetName)!;
    const probe = pool.spec.template.spec.containers[0]!.readinessProbe;
    const window = (probe.failureThreshold - 1) * (probe.periodSeconds ?? 10);
    expect(window).toBeGreaterThanOrEqual(minimumProbeWindowSeconds(leaseSeconds));
  });
});
