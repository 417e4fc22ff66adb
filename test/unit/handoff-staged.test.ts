// Hot-reloading workers (restart policy None): the handoff is staged through
// the ConfigMap itself and advances on the workers' acknowledgements. Pure.
import { describe, expect, it } from 'vitest';
import type { ValidSwarm } from '../../lib/api/types.js';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { computeCoverage } from '../../lib/decisions/coverage.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { podsByWorker } from '../../lib/decisions/workers.js';
import { readLastChange, readRestarts } from '../../lib/decisions/workspace.js';
import type { LeaseView, PodView } from '../../lib/kube/types.js';
import { HANDOVER_ANNOTATION, HANDOVER_VALUE, assignmentOf, parse, render, type WorkerConfig } from '../../lib/workerconfig/index.js';
import { swarmOf } from '../support/fixtures.js';
import { acknowledgingLabels, configOf, converge, runs, sts, validSwarm, workerPod, written } from '../support/views.js';

/** A worker that acknowledges what it runs (a hot-reloading one). */
const pod = (ordinal: number): PodView => workerPod(ordinal, { creationTimestamp: '2026-11-22T00:00:00Z', labels: acknowledgingLabels });
const jobs = Array.from({ length: 9 }, (_, i) => `job-${i}`);
const hotReload = (over: Parameters<typeof swarmOf>[0] = {}) => validSwarm(swarmOf({ jobs, restart: { policy: 'None' }, ...over }));
const uncovered = (names: readonly string[], config: WorkerConfig, pods: PodView[], leases: LeaseView[]) =>
  computeCoverage({ jobs: names, config, pods: podsByWorker('swarm-worker', 3, pods), leases, restartPending: new Set() }).uncovered;

/** Workers 0 and 1 on version 1, each running (acknowledging) its share. */
function start(swarm: ValidSwarm) {
  const pods = [pod(0), pod(1)];
  const cm = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] }));
  const v1 = configOf(cm);
  return { pods, cm, v1, leases: pods.map((p) => runs(p, v1)) };
}

describe('make-before-break, staged: gain first, release once the gainer acknowledges', () => {
  const swarm = hotReload();

  it('scale 2 → 3: the new worker gains, the losers keep their jobs (marked releasing) until it acknowledges; no job is ever uncovered', () => {
    const { pods, cm, v1, leases } = start(swarm);
    const all = [...pods, pod(2)];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: all, leases }));
    const v2 = configOf(stage1);
    expect(v2.workloads['swarm-worker-2']!.jobs).toHaveLength(3);
    for (const loser of ['swarm-worker-0', 'swarm-worker-1']) {
      // Unchanged jobs and version: the loser has nothing to reload yet.
      expect(v2.workloads[loser]!.jobs).toEqual(v1.workloads[loser]!.jobs);
      expect(v2.workloads[loser]!.version).toBe(v1.workloads[loser]!.version);
      expect(v2.workloads[loser]!.releasing?.length).toBeGreaterThan(0);
    }
    // The moves are those of the assignment (what the owners are now), recorded once.
    expect(readLastChange(stage1.annotations)?.moves).toHaveLength(3);
    expect(assignmentOf(v2)['swarm-worker-0']).toHaveLength(3);
    // Stage 1: every job still runs on its old owner.
    expect(uncovered(jobs, v2, all, leases)).toEqual([]);
    // Nothing acknowledged yet: a repeated event changes nothing.
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: all, leases })).write).toBe('none');

    // The gainer acknowledges: stage 2 releases the losers' copies, in one version.
    const gained = [...leases, runs(all[2]!, v2)];
    expect(uncovered(jobs, v2, all, gained)).toEqual([]);
    const stage2 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: all, leases: gained }));
    const v3 = configOf(stage2);
    expect(v3.version).toBe(3);
    expect(Object.values(v3.workloads).map((w) => [w.jobs.length, w.releasing])).toEqual([[3, undefined], [3, undefined], [3, undefined]]);
    // The last change still names the moves of version 2.
    expect(readLastChange(stage2.annotations)?.version).toBe(2);
    // Until the losers reload, they run more than their share: covered, duplicated, never uncovered.
    expect(uncovered(jobs, v3, all, gained)).toEqual([]);
    expect(readRestarts(stage2.annotations).steps).toEqual([]);
    // They still run the released jobs, and say so: their shares count covered.
    expect(v3.workloads['swarm-worker-0']!.released).toEqual(configOf(stage1).workloads['swarm-worker-0']!.releasing);
    // Once they reload, the marks go (no job changes hands, nobody reloads for it), and then nothing changes.
    const done = all.map((p) => runs(p, v3));
    const stage3 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage2, pods: all, leases: done }));
    const v4 = configOf(stage3);
    expect(Object.values(v4.workloads).every((w) => w.released === undefined && w.version <= 3)).toBe(true);
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage3, pods: all, leases: done })).write).toBe('none');
  });

  it('a gainer that acknowledges before its pod is Ready holds the losers back until it is: status counts only Ready workers, so no job is uncovered meanwhile', () => {
    const { pods, cm, leases } = start(swarm);
    const starting = { ...pod(2), ready: false };
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: [...pods, starting], leases }));
    const v2 = configOf(stage1);
    const gained = [...leases, runs(starting, v2)];
    // Acknowledged, not Ready: nothing is released.
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: [...pods, starting], leases: gained })).write).toBe('none');
    expect(uncovered(jobs, v2, [...pods, starting], gained)).toEqual([]);
    // Ready: the losers' copies are released.
    const v3 = configOf(written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: [...pods, pod(2)], leases: gained })));
    expect(Object.values(v3.workloads).map((w) => w.releasing)).toEqual([undefined, undefined, undefined]);
  });

  it('scale 2 → 3 by the Swarm: until the new worker has a pod, the losers keep their jobs (a gainer with no pod runs nothing)', () => {
    // The config over 3 is written first and the StatefulSet grows after it: the
    // events right after the write see no pod for the new worker yet.
    const { pods, cm, leases } = start(hotReload());
    const grown = hotReload({ replicas: 3 });
    const stage1 = written(decideConfigMap({ swarm: grown, statefulSet: sts(2), configMap: cm, pods, leases }));
    const v2 = configOf(stage1);
    const releasing = (c: WorkerConfig) => Object.values(c.workloads).flatMap((w) => w.releasing ?? []).sort();
    expect(releasing(v2)).toHaveLength(3);
    for (const statefulSet of [sts(2), sts(3)]) {
      // Again, with no pod for swarm-worker-2: nothing is released, nothing changes.
      expect(converge(decideConfigMap({ swarm: grown, statefulSet, configMap: stage1, pods, leases })).write).toBe('none');
    }
    expect(uncovered(jobs, v2, pods, leases)).toEqual([]);
  });

  it('a newer version before the gainer acknowledged keeps the earlier releases', () => {
    const { pods, cm, leases } = start(swarm);
    const all = [...pods, pod(2)];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: all, leases }));
    const releasing = (c: WorkerConfig) => Object.values(c.workloads).flatMap((w) => w.releasing ?? []).sort();
    const before = releasing(configOf(stage1));
    const more = hotReload({ jobs: [...jobs, 'job-9'] });
    const v3 = configOf(written(decideConfigMap({ swarm: more, statefulSet: sts(3), configMap: stage1, pods: all, leases })));
    expect(releasing(v3)).toEqual(before);
    // The releasing copies still run on the losers: none of those jobs is uncovered, except on
    // the worker given job-9 (its share grew: until it acknowledges, status counts it uncovered).
    const grew = Object.entries(v3.workloads).find(([, w]) => w.jobs.includes('job-9'))![0];
    const onOthers = before.filter((j) => !v3.workloads[grew]!.jobs.includes(j));
    expect(uncovered([...jobs, 'job-9'], v3, all, leases).filter((j) => onOthers.includes(j))).toEqual([]);
  });

  it('scale 3 → 2 by the Swarm: the departing worker keeps its jobs (all releasing) until the survivors acknowledge them', () => {
    const three = [pod(0), pod(1), pod(2)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] }));
    const v1 = configOf(cm);
    const leases = three.map((p) => runs(p, v1));
    // The config is assigned over 2 while pod 2 still runs (the StatefulSet shrinks later).
    const stage1 = written(decideConfigMap({ swarm: hotReload({ replicas: 2 }), statefulSet: sts(3), configMap: cm, pods: three, leases }));
    const v2 = configOf(stage1);
    expect(v2.workloads['swarm-worker-2']).toMatchObject({ jobs: v1.workloads['swarm-worker-2']!.jobs, releasing: v1.workloads['swarm-worker-2']!.jobs });
    expect(assignmentOf(v2)['swarm-worker-2']).toEqual([]);
    const survivors = [...three.slice(0, 2).map((p) => runs(p, v2)), leases[2]!];
    const stage2 = configOf(written(decideConfigMap({ swarm: hotReload({ replicas: 2 }), statefulSet: sts(3), configMap: stage1, pods: three, leases: survivors })));
    expect(Object.keys(stage2.workloads)).toEqual(['swarm-worker-0', 'swarm-worker-1']);
  });

  it('kubectl scale sts 4 → 1: the departing pods, still running or terminating, keep their jobs (releasing) until the survivor acknowledges them', () => {
    const four = [pod(0), pod(1), pod(2), pod(3)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(4), configMap: undefined, pods: [] }));
    const v1 = configOf(cm);
    const leases = four.map((p) => runs(p, v1));
    // The StatefulSet already says 1; its departing pods are being stopped (a drain keeps them running).
    const leaving = [four[0]!, ...four.slice(1).map((p) => ({ ...p, ready: false, terminating: true }))];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(1), configMap: cm, pods: leaving, leases }));
    const v2 = configOf(stage1);
    expect(assignmentOf(v2)['swarm-worker-0']).toHaveLength(9);
    for (const departing of ['swarm-worker-1', 'swarm-worker-2', 'swarm-worker-3']) {
      expect(v2.workloads[departing]).toMatchObject({ jobs: v1.workloads[departing]!.jobs, releasing: v1.workloads[departing]!.jobs });
    }
    // Until the survivor acknowledges, nothing more happens.
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(1), configMap: stage1, pods: leaving, leases })).write).toBe('none');
    const gained = [runs(four[0]!, v2), ...leases.slice(1)];
    const v3 = configOf(written(decideConfigMap({ swarm, statefulSet: sts(1), configMap: stage1, pods: leaving, leases: gained })));
    expect(Object.keys(v3.workloads)).toEqual(['swarm-worker-0']);
    // A departing pod already gone holds nothing: its jobs are not held back for it.
    const gone = configOf(written(decideConfigMap({ swarm, statefulSet: sts(1), configMap: cm, pods: [four[0]!], leases })));
    expect(Object.keys(gone.workloads)).toEqual(['swarm-worker-0']);
  });

  it('a pod replaced under its own name (deleted, evicted, rolled): its peers take its jobs before it stops, and its replacement takes a share back the same way', () => {
    const three = [pod(0), pod(1), pod(2)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] }));
    const v1 = configOf(cm);
    const leases = three.map((p) => runs(p, v1));
    // At rest the pool is told that a stopping worker's jobs are handed over: it waits for that.
    expect(cm.annotations[HANDOVER_ANNOTATION]).toBe(HANDOVER_VALUE);
    const mine = v1.workloads['swarm-worker-1']!.jobs;

    // Pod 1 is deleted (it stays within the StatefulSet's replicas: a pod of the same name will replace it).
    const stopping = [three[0]!, { ...three[1]!, ready: false, terminating: true }, three[2]!];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: stopping, leases }));
    const v2 = configOf(stage1);
    expect(v2.workloads['swarm-worker-1']).toMatchObject({ jobs: mine, releasing: mine });
    const custody = [...v2.workloads['swarm-worker-0']!.jobs, ...v2.workloads['swarm-worker-2']!.jobs];
    expect(mine.every((j) => custody.includes(j))).toBe(true);
    // Spread over both peers, least loaded first.
    expect([assignmentOf(v2)['swarm-worker-0']!.length, assignmentOf(v2)['swarm-worker-2']!.length].sort()).toEqual([4, 5]);
    expect(stage1.annotations[HANDOVER_ANNOTATION]).toBe(HANDOVER_VALUE);
    // Until the peers acknowledge, nothing more happens.
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: stopping, leases })).write).toBe('none');

    // The peers run them: the stopping pod's share empties, and it may stop.
    const custodians = [runs(three[0]!, v2), leases[1]!, runs(three[2]!, v2)];
    expect(uncovered(jobs, v2, stopping, custodians)).toEqual([]);
    const stage2 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: stopping, leases: custodians }));
    const v3 = configOf(stage2);
    expect(v3.workloads['swarm-worker-1']).toMatchObject({ jobs: [], released: mine });
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage2, pods: stopping, leases: custodians })).write).toBe('none');

    // Gone: worker 1 gets a share again, published at once (its replacement may mount it), while its peers keep theirs (releasing) until the replacement runs it.
    const gone = [three[0]!, three[2]!];
    const stage3 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage2, pods: gone, leases: custodians }));
    const v4 = configOf(stage3);
    const back = v4.workloads['swarm-worker-1']!.jobs;
    expect(back).toHaveLength(3);
    const held = [...(v4.workloads['swarm-worker-0']!.releasing ?? []), ...(v4.workloads['swarm-worker-2']!.releasing ?? [])];
    expect([...held].sort()).toEqual([...back].sort());
    expect(uncovered(jobs, v4, gone, custodians)).toEqual([]);

    // The replacement runs its share: the peers let go, three shares of three.
    const replacement = { ...pod(1), uid: 'pod-1-replacement' };
    const all = [three[0]!, replacement, three[2]!];
    const stage4 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage3, pods: all, leases: [runs(three[0]!, v4), runs(replacement, v4), runs(three[2]!, v4)] }));
    expect(Object.values(assignmentOf(configOf(stage4))).map((j) => j.length)).toEqual([3, 3, 3]);
    expect(Object.values(configOf(stage4).workloads).every((w) => !w.releasing)).toBe(true);
  });

  it('a crash-looping worker: its peers run its jobs while the kubelet backs off, and it takes a share back once it runs again', () => {
    const three = [pod(0), pod(1), pod(2)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] }));
    const v1 = configOf(cm);
    const leases = three.map((p) => runs(p, v1));
    const mine = v1.workloads['swarm-worker-1']!.jobs;

    // One crash, restarted at once (no back-off reported): nothing moves.
    const restarting = [three[0]!, { ...three[1]!, ready: false }, three[2]!];
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: restarting, leases })).write).toBe('none');

    // The kubelet backs off before the next start: the peers take its jobs, staged.
    const looping = [three[0]!, { ...three[1]!, ready: false, waiting: { reason: 'CrashLoopBackOff', message: 'back-off 10s restarting failed container' } }, three[2]!];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: looping, leases }));
    const v2 = configOf(stage1);
    expect(v2.workloads['swarm-worker-1']).toMatchObject({ jobs: mine, releasing: mine });
    expect(stage1.annotations[HANDOVER_ANNOTATION]).toBe(HANDOVER_VALUE);
    const custodians = [runs(three[0]!, v2), leases[1]!, runs(three[2]!, v2)];
    // Run by the peers: no job is left to the crashed worker alone.
    expect(uncovered(jobs, v2, looping, custodians)).toEqual([]);
    const stage2 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: looping, leases: custodians }));
    expect(configOf(stage2).workloads['swarm-worker-1']!.jobs).toEqual([]);
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage2, pods: looping, leases: custodians })).write).toBe('none');
    // Status names the worker and why, and says its jobs still have owners.
    const held = computeStatus({ swarm, now: '2026-11-22T00:00:00Z', statefulSet: { ...sts(3), readyReplicas: 2 }, config: configOf(stage2), pods: looping, leases: custodians });
    expect(held.conditions?.find((c) => c.type === 'Ready')).toMatchObject({
      status: 'False',
      reason: 'PodsNotReady',
      message: '2/3 workers ready (not ready: swarm-worker-1 (CrashLoopBackOff)); every job runs on an acknowledged worker',
    });

    // It runs again (same pod, same uid): a share back at once, the peers keep theirs (releasing) until it acknowledges.
    const again = [three[0]!, three[1]!, three[2]!];
    const stage3 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage2, pods: again, leases: custodians }));
    const v4 = configOf(stage3);
    expect(v4.workloads['swarm-worker-1']!.jobs).toHaveLength(3);
    expect(uncovered(jobs, v4, again, custodians)).toEqual([]);
    const stage4 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage3, pods: again, leases: again.map((p) => runs(p, v4)) }));
    expect(Object.values(assignmentOf(configOf(stage4))).map((j) => j.length)).toEqual([3, 3, 3]);
    expect(Object.values(configOf(stage4).workloads).every((w) => !w.releasing)).toBe(true);
  });

  it('a replaced pod with no serving peer keeps its share, and the pool is told it is not handed over (the pod stops at once)', () => {
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(1), configMap: undefined, pods: [] }));
    const v1 = configOf(cm);
    const alone = [{ ...pod(0), ready: false, terminating: true }];
    const decision = converge(decideConfigMap({ swarm, statefulSet: sts(1), configMap: cm, pods: alone, leases: [runs(pod(0), v1)] }));
    expect(decision.configMap.annotations[HANDOVER_ANNOTATION]).toBeUndefined();
    expect(configOf(decision.configMap)).toEqual(v1);
  });

  it('policy Restart and break-before-make do not hand over a stopping worker\'s jobs', () => {
    for (const restart of [{ policy: 'Restart' as const, handoff: 'BreakBeforeMake' as const }, { policy: 'None' as const, handoff: 'BreakBeforeMake' as const }]) {
      const s = validSwarm(swarmOf({ jobs, restart }));
      const cm = written(decideConfigMap({ swarm: s, statefulSet: sts(2), configMap: undefined, pods: [] }));
      expect(cm.annotations[HANDOVER_ANNOTATION]).toBeUndefined();
      const stopping = [pod(0), { ...pod(1), ready: false, terminating: true }];
      expect(configOf(converge(decideConfigMap({ swarm: s, statefulSet: sts(2), configMap: cm, pods: stopping, leases: stopping.map((p) => runs(p, configOf(cm))) })).configMap)).toEqual(configOf(cm));
    }
  });
});

describe('break-before-make, staged: release first, gain once the loser acknowledges', () => {
  const swarm = hotReload({ restart: { policy: 'None', handoff: 'BreakBeforeMake' } });

  it('scale 2 → 3: the moved jobs wait on the new worker (awaiting) until both losers acknowledge having dropped them', () => {
    const { pods, cm, leases } = start(swarm);
    const all = [...pods, pod(2)];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: all, leases }));
    const v2 = configOf(stage1);
    expect(v2.workloads['swarm-worker-2']).toMatchObject({ jobs: [], awaiting: expect.arrayContaining([expect.any(String)]) });
    expect(v2.workloads['swarm-worker-2']!.awaiting).toHaveLength(3);
    // No job is listed twice: never two runners.
    const listed = Object.values(v2.workloads).flatMap((w) => w.jobs);
    expect(new Set(listed).size).toBe(listed.length);
    // Only worker-0 has reloaded: still awaiting.
    const one = [runs(pods[0]!, v2), leases[1]!, runs(all[2]!, v2)];
    expect(converge(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: all, leases: one })).write).toBe('none');
    const both = all.map((p) => runs(p, v2));
    const v3 = configOf(written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: stage1, pods: all, leases: both })));
    expect(v3.workloads['swarm-worker-2']).toMatchObject({ jobs: v2.workloads['swarm-worker-2']!.awaiting });
    expect(v3.workloads['swarm-worker-2']!.awaiting).toBeUndefined();
  });

  it('kubectl scale sts 3 → 2: a departing pod still running holds its jobs back from the survivors (awaiting) until it is gone', () => {
    const three = [pod(0), pod(1), pod(2)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] }));
    const v1 = configOf(cm);
    const leases = three.map((p) => runs(p, v1));
    const departing = v1.workloads['swarm-worker-2']!.jobs;
    const stopping = [three[0]!, three[1]!, { ...three[2]!, ready: false, terminating: true }];
    const v2 = configOf(written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: cm, pods: stopping, leases })));
    // Listed with none while its pod lives: it stays a holder.
    expect(v2.workloads['swarm-worker-2']?.jobs).toEqual([]);
    const listed = Object.values(v2.workloads).flatMap((w) => w.jobs);
    for (const job of departing) expect(listed).not.toContain(job);
    expect(Object.values(v2.workloads).flatMap((w) => w.awaiting ?? []).sort()).toEqual([...departing].sort());
  });
});

describe('config.yml marks', () => {
  it('render and parse keep releasing/awaiting; parse refuses marks that contradict jobs', () => {
    const config: WorkerConfig = { version: 4, workloads: { a: { jobs: ['x', 'y'], version: 2, releasing: ['y'] }, b: { jobs: [], version: 4, awaiting: ['z'] } } };
    expect(parse(render(config))).toEqual(config);
    expect(() => parse('version: 1\nworkloads:\n  a: {jobs: [x], version: 1, releasing: [y]}\n')).toThrow(/releasing: "y" is not in jobs/);
    expect(() => parse('version: 1\nworkloads:\n  a: {jobs: [x], version: 1, awaiting: [x]}\n')).toThrow(/awaiting: "x" is already in jobs/);
  });

  it('status says the handoff is in flight while every job is covered', () => {
    const swarm = hotReload();
    const { pods, cm, leases } = start(swarm);
    const all = [...pods, pod(2)];
    const stage1 = written(decideConfigMap({ swarm, statefulSet: sts(3), configMap: cm, pods: all, leases }));
    const s = computeStatus({ swarm, now: '2026-11-22T00:00:00Z', statefulSet: sts(3), config: configOf(stage1), pods: all, leases });
    expect(s.uncoveredJobs).toBe(0);
    expect(s.phase).toBe('Updating');
    expect(s.conditions?.find((c) => c.type === 'Progressing')).toMatchObject({ status: 'True', reason: 'HandingOff' });
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'JobsCovered' });
  });
});
