// Failure detection on the real node (issue 34, docs/failure-detection.md):
// the sample's reference workers as real pods (2 per pool, spec.failover with
// leaseSeconds 15, the sample's readiness probe sized for it), Swarm on real
// Knative, and one worker at a time
//   - frozen: its container's processes SIGSTOPped (found by their cgroup),
//   - cut off: its packets to the API server dropped by an iptables rule in
//     its pod's network namespace,
//   - hung: its jobs stop making progress (the reference worker's test hook,
//     HANG_JOBS_ON_SIGNAL), its process alive and its HTTP answering.
// Asserted from the workers' own reports and the Swarm's status: its share
// runs on its peer within leaseSeconds + 10 s, the promise (the
// design's figures are 12–14 s for a freeze and up to 22–25 s for a partition:
// the bound is the promise itself, not a tuned timeout); status shows it
// expired with nothing uncovered while the fault lasts; once the fault is
// undone (or the kubelet's liveness probe restarted the container meanwhile)
// it starts nothing its share does not name, and every job runs exactly once
// again. Under BreakBeforeMake no job ever has two running owners.
// Each fault runs in its own namespace, at the same time (the tier's time
// budget); trials and their figures are bench:failover's.
import { afterAll, describe, expect, inject, it } from 'vitest';
import { startEndToEnd, type EndToEnd } from '../harness/end-to-end.js';
import { FailoverPool, LEASE_SECONDS, type TrialResult } from '../harness/failover-trial.js';
import { seedStreams } from '../support/fixtures.js';

const kubeconfig = inject('kubeconfig');
/** The promise: the share runs on a peer within leaseSeconds + 10 s of the fault. */
const BOUND_MS = (LEASE_SECONDS + 10) * 1000;

const worlds: EndToEnd[] = [];
const pools: FailoverPool[] = [];

async function poolIn(name: string): Promise<FailoverPool> {
  const namespace = `failover-${name}-${process.pid}`;
  const world = await startEndToEnd({ kubeconfig, namespace, realNode: inject('realNode'), resyncEveryMs: 10_000 });
  // What this file adds to a warm tier: from the first namespace served (Knative and Swarm already up) to the end.
  if (worlds.length === 0) console.log(`[failover-e2e] ${namespace} served at ${new Date().toISOString()}`);
  worlds.push(world);
  const pool = new FailoverPool(world, kubeconfig, namespace, seedStreams);
  pools.push(pool);
  return pool;
}

afterAll(async () => {
  // No rule or stopped process left behind, whatever happened.
  for (const pool of pools) await pool.faults.undoAll();
  await Promise.all(worlds.map((w) => w.stop()));
  console.log(`[failover-e2e] done at ${new Date().toISOString()}`);
});

/** The outcome a failover must have, whatever the fault. */
function expectFailedOver(result: TrialResult, pool: FailoverPool): void {
  console.log(`[failover-e2e] ${result.fault}: ${JSON.stringify({ ...result, share: result.share.length })}`);
  expect(result.share.length).toBeGreaterThan(0);
  expect(result.takeoverMs).toBeDefined();
  expect(result.takeoverMs!).toBeLessThanOrEqual(BOUND_MS);
  expect(result.expiredStatus).toEqual({ uncoveredJobs: 0, reason: 'WorkersExpired', names: true });
  expect(result.strayStarts).toEqual([]);
  const readyUncovered = pool.statuses.filter((st) => st?.conditions?.find((c) => c.type === 'Ready')?.status === 'True' && (st.uncoveredJobs ?? 0) > 0);
  expect(readyUncovered).toEqual([]);
}

/**
 * The namespaces are served one after the other and all before any pool runs: the first deploys
 * Swarm on Knative (once per cluster), and each rolls the ApiServerSource's adapter out anew,
 * whose new watches miss what changes while it lists (a trial must not run meanwhile).
 */
let served: Promise<Map<string, FailoverPool>> | undefined;
async function deployed(name: 'freeze' | 'partition' | 'partition-bbm' | 'hang', handoff: 'MakeBeforeBreak' | 'BreakBeforeMake' = 'MakeBeforeBreak'): Promise<FailoverPool> {
  served ??= (async () => {
    const byName = new Map<string, FailoverPool>();
    for (const each of ['freeze', 'partition', 'partition-bbm', 'hang']) byName.set(each, await poolIn(each));
    return byName;
  })();
  const pool = (await served).get(name)!;
  await pool.deploy(handoff);
  return pool;
}

describe.concurrent('failover on the real node: a worker frozen, cut off, or hung loses its jobs to its peer', () => {
  it('kill -STOP (MakeBeforeBreak): its peer runs its share within leaseSeconds + 10 s; status shows 0 uncovered while it is still frozen; after kill -CONT every job once', async () => {
    const freeze = await deployed('freeze');
    const result = await freeze.trial('freeze');
    expectFailedOver(result, freeze);
    // Read while every process of its container was still stopped (its liveness probe restarts it after 20–30 s).
    expect(result.faultInPlaceAtStatus).toBe(true);
  }, 600_000);

  it('its traffic to the API server dropped (iptables in its network namespace): the same; then under BreakBeforeMake the same, and no job ever has two running owners', async () => {
    // restart.handoff is immutable (a switch mid hand-off keeps neither promise): BreakBeforeMake in a pool of its own.
    const [partition, breaking] = await Promise.all([deployed('partition'), deployed('partition-bbm', 'BreakBeforeMake')]);
    const mbb = await partition.trial('partition');
    expectFailedOver(mbb, partition);
    expect(mbb.faultInPlaceAtStatus).toBe(true);
    const bbm = await breaking.trial('partition');
    expectFailedOver(bbm, breaking);
    // The workers' own reports: it stopped its share (fenced) before its peer started any of it.
    expect(bbm.duplicateSeconds).toBe(0);
  }, 720_000);

  it('a hung job (its process alive, its HTTP answering): the same failover', async () => {
    const hang = await deployed('hang');
    const result = await hang.trial('hang');
    expectFailedOver(result, hang);
  }, 600_000);
});
