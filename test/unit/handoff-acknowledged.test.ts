// Handoffs gated on what workers report (their acknowledgement Leases), not on
// readiness: pure decisions over plain data, no cluster.
import { describe, expect, it } from 'vitest';
import type { ValidSwarm } from '../../lib/api/types.js';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { decideRestarts } from '../../lib/decisions/restarts.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import type { LeaseView } from '../../lib/kube/types.js';
import { swarmOf } from '../support/fixtures.js';
import { acknowledgement, acknowledgingLabels, configOf, converge, incarnations, runs, sealed, sts, validSwarm, workerPod, written } from '../support/views.js';

/** A worker that acknowledges what it runs; each call a new incarnation of the pod. */
const pod = incarnations((ordinal, over = {}) => workerPod(ordinal, { creationTimestamp: '2026-11-22T00:00:00Z', labels: acknowledgingLabels, ...over }));
const jobs = Array.from({ length: 9 }, (_, i) => `job-${i}`);
/** Restarted to load a share; restarts break first (the API refuses Restart with MakeBeforeBreak). */
const RESTART = { policy: 'Restart', handoff: 'BreakBeforeMake' } as const;

/** Two workers converged on version 1, each acknowledging its share (the write sealed by a look that listed them). */
function twoWorkers(swarm: ValidSwarm) {
  const pods = [pod(0), pod(1)];
  const created = decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] });
  const v1 = converge(created).config;
  const leases = pods.map((p) => runs(p, v1));
  return { pods, cm: sealed(created, { swarm, statefulSet: sts(2), pods, leases }), v1, leases };
}

describe('restarts (policy Restart, break-before-make) judge pods by what they acknowledge', () => {
  const swarm = validSwarm(swarmOf({ jobs, restart: RESTART }));

  it('a gainer that started before its share existed acknowledges an older one: it is restarted after its losers', () => {
    const { pods, cm, v1, leases } = twoWorkers(swarm);
    const early = pod(2);
    // It read version 1, where it had no share.
    const stale = [...leases, acknowledgement(early, v1.version, [])];
    const up = sealed(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: [...pods, early], leases: stale }), { swarm, statefulSet: sts(3), pods: [...pods, early], leases: stale });
    const v2 = configOf(up);
    const workspace = readRestarts(up.annotations);
    expect(workspace.steps.find((s) => s.worker === 'swarm-worker-2')).toEqual({ worker: 'swarm-worker-2', staleUid: early.uid, waitFor: ['swarm-worker-0', 'swarm-worker-1'] });
    const d = decideRestarts({ swarm, statefulSet: sts(3), workspace, pods: [...pods, early], config: v2, leases: stale });
    expect(d.deletes.map((p) => p.name)).toEqual(['swarm-worker-0']);
    expect(d.waiting).toMatch(/swarm-worker-2 waits for swarm-worker-0, swarm-worker-1 to acknowledge/);
    // The losers acknowledge their smaller shares: the gainer goes.
    const stopped = [runs(pods[0]!, v2), runs(pods[1]!, v2), stale[2]!];
    expect(decideRestarts({ swarm, statefulSet: sts(3), workspace, pods: [...pods, early], config: v2, leases: stopped }).deletes.map((p) => p.name)).toEqual(['swarm-worker-2']);
  });

  it('a pod seen acknowledging an older share later (it read the config before the write landed) gets a step on the next event', () => {
    const { pods, cm, leases } = twoWorkers(swarm);
    // Sealed by a look that listed no pod of swarm-worker-2: one made after it reads the new share, as far as assign can tell.
    const up = sealed(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods, leases }), { swarm, statefulSet: sts(3), pods, leases });
    const late = pod(2);
    const again = converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: up, pods: [...pods, late], leases: [...leases, acknowledgement(late, 1, [])] }));
    expect(again.write).toBe('update');
    expect(readRestarts(again.configMap.annotations).steps.map((s) => s.worker)).toContain('swarm-worker-2');
    // Once it acknowledges its share, nothing is added: a no-op stays a no-op.
    const v2 = configOf(up);
    const quiet = converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: up, pods: [...pods, late], leases: [...leases, runs(late, v2)] }));
    expect(quiet.write).toBe('none');
  });

  it('a loser that already acknowledges its new share (it reloaded by itself) is not restarted, and assign forgets its step', () => {
    const { pods, cm, leases } = twoWorkers(swarm);
    const gainer = pod(2);
    const up = sealed(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: [...pods, gainer], leases }), { swarm, statefulSet: sts(3), pods: [...pods, gainer], leases });
    const v2 = configOf(up);
    const workspace = readRestarts(up.annotations);
    const reloaded = [runs(pods[0]!, v2), leases[1]!, runs(gainer, v2)];
    const d = decideRestarts({ swarm, statefulSet: sts(3), workspace, pods: [...pods, gainer], config: v2, leases: reloaded });
    expect(d.deletes.map((p) => p.name)).toEqual(['swarm-worker-1']);
    expect(d.outstanding).toEqual(['swarm-worker-1']);
    const next = converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: up, pods: [...pods, gainer], leases: reloaded }));
    expect(readRestarts(next.configMap.annotations).steps.map((s) => s.worker)).toEqual(['swarm-worker-1']);
  });

  it('pods that predate the first assignment and acknowledge nothing are restarted', () => {
    const early = [pod(0), pod(1)];
    const first = sealed(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: early, leases: [] }), { swarm, statefulSet: sts(2), pods: early, leases: [] });
    const workspace = readRestarts(first.annotations);
    expect(workspace.steps.map((s) => [s.worker, s.staleUid])).toEqual([
      ['swarm-worker-0', early[0]!.uid],
      ['swarm-worker-1', early[1]!.uid],
    ]);
    const d = decideRestarts({ swarm, statefulSet: sts(2), workspace, pods: early, config: configOf(first), leases: [] });
    expect(d.deletes.map((p) => p.name)).toEqual(['swarm-worker-0']);
    // Not yet Ready (still starting, it will read the share it mounts): the write pins neither.
    const starting = [pod(0, { ready: false }), pod(1, { ready: false })];
    // A pool whose template declares acknowledgement (a view without template labels is sealed: it may not).
    const declaring = { ...sts(2), templateLabels: acknowledgingLabels };
    const create = decideConfigMap({ swarm, statefulSet: declaring, configMap: undefined, pods: starting, leases: [] });
    expect(readRestarts(converge(create).configMap.annotations).steps).toEqual([]);
    // Pods that acknowledge are not sealed (restart-bookkeeping.ts): they say what they read. Once they acknowledge
    // their shares nothing is restarted; one that acknowledges an older share (none) is pinned on the next look.
    expect(readRestarts(converge(create).configMap.annotations).unsealed).toBeUndefined();
    const config = converge(create).config;
    const up = starting.map((p) => ({ ...p, ready: true }));
    const acked = decideRestarts({ swarm, statefulSet: sts(2), workspace: readRestarts(converge(create).configMap.annotations), pods: up, config, leases: up.map((p) => runs(p, config)) });
    expect([acked.deletes, acked.outstanding]).toEqual([[], []]);
    const older = written(create);
    const look = decideConfigMap({ swarm, statefulSet: declaring, configMap: { ...older, resourceVersion: '2' }, pods: up, leases: [runs(up[0]!, config), runs(up[1]!, { version: 0, workloads: {} })] });
    expect(readRestarts(converge(look).configMap.annotations).steps.map((s) => s.staleUid)).toEqual([up[1]!.uid]);
  });

  it('waits of an unfinished rollout survive a newer version', () => {
    const three = [pod(0), pod(1), pod(2)];
    const first = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] }));
    const v1 = configOf(first);
    const leases = three.map((p) => runs(p, v1));
    // worker-1's jobs removed: it gains jobs from its peers, and waits for them to stop those.
    const fewer = jobs.filter((j) => !v1.workloads['swarm-worker-1']!.jobs.includes(j));
    const v2cm = written(decideConfigMap({ swarm: validSwarm(swarmOf({ jobs: fewer, restart: RESTART })), statefulSet: sts(3), configMap: first, pods: three, leases }));
    const waits = readRestarts(v2cm.annotations).steps.find((s) => s.worker === 'swarm-worker-1')?.waitFor ?? [];
    expect(waits.length).toBeGreaterThan(0);
    // Before the losers acknowledge, a job is added: version 3 is a smaller change.
    const more = validSwarm(swarmOf({ jobs: [...fewer, 'job-9'], restart: RESTART }));
    const v3cm = written(decideConfigMap({ swarm: more, statefulSet: sts(3), configMap: v2cm, pods: three, leases }));
    const v3 = configOf(v3cm);
    expect(v3.version).toBe(3);
    const workspace = readRestarts(v3cm.annotations);
    for (const loser of waits) expect(workspace.steps.find((s) => s.worker === 'swarm-worker-1')?.waitFor).toContain(loser);
    const d = decideRestarts({ swarm: more, statefulSet: sts(3), workspace, pods: three, config: v3, leases });
    expect(d.deletes.map((p) => p.name)).not.toContain('swarm-worker-1');
  });

  it('status: Ready only once every job is acknowledged by its owner', () => {
    const { pods, cm, leases } = twoWorkers(swarm);
    const gainer = pod(2);
    const up = sealed(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: [...pods, gainer], leases }), { swarm, statefulSet: sts(3), pods: [...pods, gainer], leases });
    const v2 = configOf(up);
    const now = '2026-11-22T00:00:00Z';
    const status = (ls: LeaseView[]) =>
      computeStatus({ swarm, now, statefulSet: sts(3), config: v2, workspace: readRestarts(up.annotations), pods: [...pods, gainer], leases: ls });
    expect(status(leases).conditions?.find((c) => c.type === 'Ready')?.status).toBe('False');
    // Every worker acknowledges version 2 (the losers reloaded): the moved jobs still await the
    // gainer (break-before-make publishes them to it only once no loser may run them).
    const all = [...pods, gainer].map((p) => runs(p, v2));
    const moved = v2.workloads['swarm-worker-2']!.awaiting ?? [];
    expect(moved.length).toBeGreaterThan(0);
    expect(status(all).uncoveredJobs).toBe(moved.length);
    // Version 3 publishes them; the gainer, restarted to load them, acknowledges it: every job covered.
    // Sealed by a look that listed the gainer's pod still the one pinned: restart then replaces it.
    const next = sealed(decideConfigMap({ swarm, statefulSet: sts(3), configMap: up, pods: [...pods, gainer], leases: all }), { swarm, statefulSet: sts(3), pods: [...pods, gainer], leases: all });
    const v3 = configOf(next);
    expect(v3.workloads['swarm-worker-2']!.jobs).toEqual(expect.arrayContaining([...moved]));
    const restarted = pod(2);
    const s = computeStatus({ swarm, now, statefulSet: sts(3), config: v3, workspace: readRestarts(next.annotations), pods: [...pods, restarted], leases: [...all.slice(0, 2), runs(restarted, v3)] });
    expect(s.uncoveredJobs).toBe(0);
    expect(s.workers?.every((w) => !w.restartPending)).toBe(true);
  });
});

describe('break-before-make waits for the loser to acknowledge its smaller share, not to be Ready', () => {
  const swarm = validSwarm(swarmOf({ jobs, restart: { ...RESTART, maxUnavailable: 3 } }));

  it('restarts the gainer only after the losers acknowledge having stopped the moved jobs', () => {
    // 3 → 2: worker-2 goes; its jobs move to worker-0 and worker-1 (gainers), who lose nothing.
    const pods = [pod(0), pod(1), pod(2)];
    const first = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] }));
    const v1 = configOf(first);
    const leases = pods.map((p) => runs(p, v1));
    // A job moves from worker-0 to worker-1 when job-0's owner changes: make it by removing jobs from worker-1's side.
    const fewer = validSwarm(swarmOf({ jobs: jobs.filter((j) => !v1.workloads['swarm-worker-1']!.jobs.includes(j)), restart: { ...RESTART, maxUnavailable: 3 } }));
    const next = sealed(decideConfigMap({ swarm: fewer, statefulSet: sts(3), configMap: first, pods, leases }), { swarm: fewer, statefulSet: sts(3), pods, leases });
    const v2 = configOf(next);
    const workspace = readRestarts(next.annotations);
    const gainers = workspace.steps.filter((s) => s.waitFor.length > 0);
    expect(gainers.length).toBeGreaterThan(0);
    const d = decideRestarts({ swarm: fewer, statefulSet: sts(3), workspace, pods, config: v2, leases });
    for (const g of gainers) expect(d.deletes.map((p) => p.name)).not.toContain(g.worker);
    // The losers stopped (acknowledged their new share): the gainers go.
    const stopped = pods.map((p) => (gainers.some((g) => g.worker === p.name) ? runs(p, v1) : runs(p, v2)));
    const after = decideRestarts({ swarm: fewer, statefulSet: sts(3), workspace, pods, config: v2, leases: stopped });
    for (const g of gainers) expect(after.deletes.map((p) => p.name)).toContain(g.worker);
  });
});
