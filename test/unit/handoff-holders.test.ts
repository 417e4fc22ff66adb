// Defects the simulator found (test/sim/corpus), each on the decision it concerns: who still holds
// a job when its pod is outside the StatefulSet's range, a lost config under break-before-make, and
// a new pod under policy Restart that cannot show what it read.
import { describe, expect, it } from 'vitest';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import type { PodView } from '../../lib/kube/types.js';
import { swarmOf } from '../support/fixtures.js';
import { acknowledgingLabels, configOf, runs, sealed, sts, validSwarm, workerPod, written } from '../support/views.js';

const jobs = Array.from({ length: 6 }, (_, i) => `job-${i}`);
const pod = (ordinal: number, over: Partial<PodView> = {}): PodView => workerPod(ordinal, { labels: acknowledgingLabels, ...over });

describe('pods outside the range still hold what the config in force gives them', () => {
  it('ordinals.start moved under make-before-break: the old pods keep their jobs, releasing, until the new ones acknowledge (mbb-ordinals-start)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff: 'MakeBeforeBreak' } }));
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] }));
    const v1 = configOf(first);
    const old = [pod(0), pod(1)];
    const moved = { ...sts(2), startOrdinal: 1 };
    const next = configOf(written(decideConfigMap({ swarm, statefulSet: moved, configMap: first, pods: old, leases: old.map((p) => runs(p, v1)) })));
    // swarm-worker-0 is outside 1..2 now, but its pod runs its jobs: it keeps them until swarm-worker-2 acknowledges.
    expect(next.workloads['swarm-worker-0']?.jobs).toEqual(v1.workloads['swarm-worker-0']?.jobs);
    expect(next.workloads['swarm-worker-0']?.releasing).toEqual(v1.workloads['swarm-worker-0']?.jobs);
  });

  it('ordinals.start moved under break-before-make: nobody gains the old pods\' jobs while they run them (ordinals-start-break-before-make)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff: 'BreakBeforeMake' } }));
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] }));
    const v1 = configOf(first);
    const old = [pod(0), pod(1)];
    const stage = written(decideConfigMap({ swarm, statefulSet: { ...sts(2), startOrdinal: 1 }, configMap: first, pods: old, leases: old.map((p) => runs(p, v1)) }));
    const next = configOf(stage);
    const stillRunning = new Set(v1.workloads['swarm-worker-0']!.jobs);
    for (const [worker, share] of Object.entries(next.workloads)) {
      if (worker === 'swarm-worker-0') continue;
      expect(share.jobs.filter((j) => stillRunning.has(j))).toEqual([]);
    }
    // The departing worker stays listed, with no jobs, until it acknowledges none or is gone.
    expect(next.workloads['swarm-worker-0']?.jobs).toEqual([]);
  });
});

describe('a lost config under break-before-make', () => {
  it('publishes every job as awaiting, to nobody, until every live pod acknowledges a share of none (configmap-deleted-break-before-make)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff: 'BreakBeforeMake' } }));
    const withStatus = { ...swarm, status: { version: 7 } };
    const pods = [pod(0), pod(1)];
    const recreated = configOf(written(decideConfigMap({ swarm: withStatus, statefulSet: sts(2), configMap: undefined, pods, leases: [] })));
    expect(recreated.version).toBe(8);
    for (const share of Object.values(recreated.workloads)) expect(share.jobs).toEqual([]);
    expect(Object.values(recreated.workloads).flatMap((s) => s.awaiting ?? []).sort()).toEqual([...jobs].sort());
  });

  it('counts a departing pod as a holder until it acknowledges none or is gone (configmap-garbled-departing-pod-bbm)', () => {
    // spec.replicas 4 → 2: the StatefulSet shrank first; swarm-worker-2 and -3 still run their shares as the config is lost.
    const swarm = { ...validSwarm(swarmOf({ jobs, replicas: 2, restart: { policy: 'None', handoff: 'BreakBeforeMake' } })), status: { version: 7 } };
    const pods = [pod(0), pod(1), pod(2), pod(3)];
    const lost = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods, leases: [] }));
    const recreated = configOf(lost);
    expect(recreated.workloads['swarm-worker-2']?.jobs).toEqual([]);
    expect(recreated.workloads['swarm-worker-3']?.jobs).toEqual([]);
    // Every pod but swarm-worker-2 acknowledges its empty share: it may still run any job, so nobody else gains one.
    const acked = [pod(0), pod(1), pod(3)].map((p) => runs(p, recreated));
    const next = configOf(written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: lost, pods, leases: acked })));
    for (const [worker, share] of Object.entries(next.workloads)) if (worker !== 'swarm-worker-2') expect(share.jobs).toEqual([]);
    // Its pod gone (and -3's), the survivors take every job.
    const survivors = [pod(0), pod(1)];
    const gone = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: lost, pods: survivors, leases: survivors.map((p) => runs(p, recreated)) }));
    expect(Object.values(configOf(gone).workloads).flatMap((s) => s.jobs).sort()).toEqual([...jobs].sort());
  });
});

describe('policy Restart: a new worker\'s running pod that cannot acknowledge', () => {
  it('is restarted once: what it read before its share was written cannot be observed (restart-noack-scale-up-inferred)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } }));
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] }));
    const plain = (ordinal: number, over: Partial<PodView> = {}) => workerPod(ordinal, { startedAt: '2026-01-01T00:00:05Z', ...over });
    const early = plain(2);
    const up = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: first, pods: [plain(0), plain(1), early] }));
    expect(readRestarts(up.annotations).steps.map((s) => [s.worker, s.staleUid])).toContainEqual(['swarm-worker-2', early.uid]);
    // One whose container has not started reads the share being written: not restarted.
    const pending = plain(2, { startedAt: undefined as never, ready: false, phase: 'Pending' });
    const fresh = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: first, pods: [plain(0), plain(1), pending] }));
    expect(readRestarts(fresh.annotations).steps.map((s) => s.worker)).not.toContain('swarm-worker-2');
  });
});

describe('policy Restart: a departing worker whose pod cannot acknowledge', () => {
  it('holds what it read at its start until its pod is gone, its share emptied or not (restart-noack-ordinals-start)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } }));
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] }));
    const v1 = configOf(first);
    const old = [workerPod(0), workerPod(1)];
    const moved = { ...sts(2), startOrdinal: 2 };
    // ordinals.start 0 → 2: swarm-worker-0 and -1 depart, their jobs await -2 and -3. The write is sealed by a look
    // that lists the old pods only: -2 and -3's pods, made after it, read the new config.
    const emptied = sealed(decideConfigMap({ swarm, statefulSet: moved, configMap: first, pods: old }), { swarm, statefulSet: moved, pods: old });
    const ran = new Set([...v1.workloads['swarm-worker-0']!.jobs, ...v1.workloads['swarm-worker-1']!.jobs]);
    const gained = (cm: typeof emptied) => Object.entries(configOf(cm).workloads).flatMap(([w, share]) => (w === 'swarm-worker-0' || w === 'swarm-worker-1' ? [] : share.jobs.filter((j) => ran.has(j))));
    expect(gained(emptied)).toEqual([]);
    // Its share is empty now, but its pod, started long before, runs what it read: it stays a holder.
    const newPods = [workerPod(2), workerPod(3)];
    const again = written(decideConfigMap({ swarm, statefulSet: moved, configMap: emptied, pods: [...old, ...newPods] }));
    expect(configOf(again).workloads['swarm-worker-0']?.jobs).toEqual([]);
    expect(gained(again)).toEqual([]);
    // Its pods gone, the gainers take the jobs.
    const gone = written(decideConfigMap({ swarm, statefulSet: moved, configMap: again, pods: newPods }));
    expect(gained(gone).sort()).toEqual([...ran].sort());
  });
});

// The simulator's corpus restart-noack-departing-returns (seed 422): a pod that cannot acknowledge departs (its
// share emptied with no restart: it is leaving), then a scale-up brings it back before it is gone. It still runs
// what it read at its start: its share change is pinned to it, so nobody gains those jobs until it is restarted.
describe('policy Restart: a departing pod that cannot acknowledge, brought back by a scale-up', () => {
  it('is pinned for a restart when its share changes while it departs, and holds its jobs until restarted', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'Restart', handoff: 'BreakBeforeMake' } }));
    const first = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] }));
    const v1 = configOf(first);
    const pods = [workerPod(0), workerPod(1)];
    // kubectl scale sts --replicas 1: swarm-worker-1 departs, its share empties.
    const shrunk = written(decideConfigMap({ swarm, statefulSet: sts(1), configMap: first, pods }));
    expect(readRestarts(shrunk.annotations).steps.map((s) => [s.worker, s.staleUid])).toContainEqual(['swarm-worker-1', pods[1]!.uid]);
    // Back to 2 before its pod is gone: none of the jobs it read at its start goes to anyone else yet.
    const back = configOf(written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: shrunk, pods })));
    const ran = new Set(v1.workloads['swarm-worker-1']!.jobs);
    expect((back.workloads['swarm-worker-0']?.jobs ?? []).filter((j) => ran.has(j))).toEqual([]);
  });
});

