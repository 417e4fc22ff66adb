// Truthful status from the workers' acknowledgement Leases: pure, no cluster.
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { computeCoverage } from '../../lib/decisions/coverage.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { reconcileAssign } from '../../lib/reconcilers/assign.js';
import { podsByWorker } from '../../lib/decisions/workers.js';
import type { LeaseView, PodView } from '../../lib/kube/types.js';
import { DIGEST_ANNOTATION, VERSION_ANNOTATION, jobsDigest, parse, parseAcknowledgement, render } from '../../lib/workerconfig/index.js';
import { seedStreams, stubWorld, swarmOf } from '../support/fixtures.js';
import { acknowledgement, acknowledgingLabels, runs, sts, validSwarm, workerPod } from '../support/views.js';

const now = '2026-11-22T00:00:00Z';
/** A worker that acknowledges what it runs, created now, uid `uid-<ordinal>`. */
const pod = (ordinal: number, over: Partial<PodView> = {}): PodView =>
  workerPod(ordinal, { uid: `uid-${ordinal}`, creationTimestamp: now, labels: acknowledgingLabels, ownerStatefulSet: undefined, ...over });
/** The Lease of worker `ordinal`'s pod: it loaded `jobs` of config `version` now. */
const lease = (ordinal: number, version: number, jobs: readonly string[], over: Partial<LeaseView> = {}): LeaseView => acknowledgement(pod(ordinal), version, jobs, over, now);
// Version 4: worker-0's share last changed at 4, worker-1's at 2.
const config = parse(render({ version: 4, workloads: { 'swarm-worker-0': { jobs: ['a', 'b'], version: 4 }, 'swarm-worker-1': { jobs: ['c'], version: 2 } } }));
const jobs = ['a', 'b', 'c'];
const coverage = (pods: PodView[], leases: LeaseView[], restartPending: string[] = []) =>
  computeCoverage({ jobs, config, pods: podsByWorker('swarm-worker', 2, pods), leases, restartPending: new Set(restartPending) });

describe('jobsDigest (shared by Swarm and the workers)', () => {
  it('is order-independent, distinguishes lists, and is the documented sha256 of sorted "name\\n"', () => {
    expect(jobsDigest(['b', 'a'])).toBe(jobsDigest(['a', 'b']));
    expect(jobsDigest(['a'])).not.toBe(jobsDigest(['a', 'b']));
    // sha256("a\nb\n"), as examples/worker/README.md tells other languages to compute it.
    expect(jobsDigest(['b', 'a'])).toBe(`sha256:${createHash('sha256').update('a\nb\n').digest('hex')}`);
    expect(jobsDigest([])).toBe('sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  });

  it('an acknowledgement needs a holder, a version and a digest', () => {
    expect(parseAcknowledgement(lease(0, 4, ['a']))).toMatchObject({ worker: 'swarm-worker-0', podUid: 'uid-0', version: 4 });
    expect(parseAcknowledgement(lease(0, 4, ['a'], { holderIdentity: undefined }))).toBeUndefined();
    expect(parseAcknowledgement(lease(0, 4, ['a'], { annotations: { [DIGEST_ANNOTATION]: 'sha256:x' } }))).toBeUndefined();
    expect(parseAcknowledgement(lease(0, 4, ['a'], { annotations: { [VERSION_ANNOTATION]: '-1', [DIGEST_ANNOTATION]: 'x' } }))).toBeUndefined();
  });
});

describe('computeCoverage', () => {
  const both = [lease(0, 4, ['a', 'b']), lease(1, 4, ['c'])];

  it('every worker acknowledged, Ready, digest matching: nothing uncovered, runningVersion reported', () => {
    const c = coverage([pod(0), pod(1)], both);
    expect(c.uncovered).toEqual([]);
    expect(c.unverified).toBe(0);
    expect(c.workers.get('swarm-worker-1')).toEqual({ state: 'Acknowledged', runningVersion: 4 });
  });

  it('a share unchanged since an older version is covered by an acknowledgement of any version since', () => {
    expect(coverage([pod(0), pod(1)], [lease(0, 4, ['a', 'b']), lease(1, 2, ['c'])]).uncovered).toEqual([]);
  });

  it('no lease: its jobs are uncovered', () => {
    const c = coverage([pod(0), pod(1)], [both[0]!]);
    expect(c.uncovered).toEqual(['c']);
    expect(c.workers.get('swarm-worker-1')).toEqual({ state: 'Uncovered' });
  });

  it('stale version: an acknowledgement older than the share does not cover it', () => {
    const c = coverage([pod(0), pod(1)], [lease(0, 3, ['a', 'b']), both[1]!]);
    expect(c.uncovered).toEqual(['a', 'b']);
    expect(c.workers.get('swarm-worker-0')).toEqual({ state: 'Uncovered', runningVersion: 3 });
  });

  it('digest mismatch: the worker runs other jobs than its share', () => {
    expect(coverage([pod(0), pod(1)], [lease(0, 4, ['a']), both[1]!]).uncovered).toEqual(['a', 'b']);
  });

  it('pod not Ready, or terminating: uncovered even though acknowledged', () => {
    expect(coverage([pod(0, { ready: false }), pod(1)], both).uncovered).toEqual(['a', 'b']);
    expect(coverage([pod(0), pod(1, { terminating: true })], both).uncovered).toEqual(['c']);
  });

  it('a lease written by an older pod of the same name does not speak for its replacement', () => {
    const c = coverage([pod(0), pod(1, { uid: 'uid-1-replacement' })], both);
    expect(c.uncovered).toEqual(['c']);
    expect(c.workers.get('swarm-worker-1')).toEqual({ state: 'Uncovered' });
  });

  it('a lease loaded before the pod\'s containers (re)started speaks for an earlier run, not this one (sim seed 742)', () => {
    const later = '2026-11-22T00:00:10Z';
    // The worker container restarted after its last acknowledgement (a crash): nothing said yet by the new process.
    const crashed = coverage([pod(0), pod(1, { startedAt: later })], both);
    expect(crashed.uncovered).toEqual(['c']);
    // A sidecar restarted alone (its containers' earliest start is before the load): the worker's word stands.
    const sidecar = coverage([pod(0), pod(1, { startedAt: later, restartedAllAt: '2026-11-21T23:59:00Z' })], both);
    expect(sidecar.uncovered).toEqual([]);
  });

  it('a worker whose pod is missing covers nothing', () => {
    expect(coverage([pod(0)], both).uncovered).toEqual(['c']);
  });

  it('0 replicas with jobs: every job uncovered', () => {
    const empty = parse(render({ version: 5, workloads: {} }));
    expect(computeCoverage({ jobs, config: empty, pods: new Map(), leases: both, restartPending: new Set() }).uncovered).toEqual(jobs);
  });

  it('a worker not yet restarted after the last change still covers the share it acknowledged before it (rebuilt from the moves, checked by digest)', () => {
    // Version 5 moved b from worker-0 to worker-1; neither has reloaded (restart policy Restart).
    const v5 = parse(render({ version: 5, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 5 }, 'swarm-worker-1': { jobs: ['b', 'c'], version: 5 } } }));
    const moved = { version: 5, moves: [{ job: 'b', from: 'swarm-worker-0', to: 'swarm-worker-1' }] };
    // Both restarts are due: each pod still runs what it loaded.
    const judge = (leases: LeaseView[], lastChange?: typeof moved, restartPending = new Set(['swarm-worker-0', 'swarm-worker-1'])) =>
      computeCoverage({ jobs, config: v5, pods: podsByWorker('swarm-worker', 2, [pod(0), pod(1)]), leases, restartPending, ...(lastChange ? { lastChange } : {}) });
    const before = [lease(0, 4, ['a', 'b']), lease(1, 4, ['c'])];
    const c = judge(before, moved);
    // b runs on its old owner: nothing is uncovered. worker-0 runs (more than) its share; worker-1 lacks b.
    expect(c.uncovered).toEqual([]);
    expect(c.workers.get('swarm-worker-0')).toEqual({ state: 'Acknowledged', runningVersion: 4 });
    expect(c.workers.get('swarm-worker-1')).toEqual({ state: 'Uncovered', runningVersion: 4 });
    // Without the moves (not all recorded), or with a digest of something else, nobody is credited.
    expect(judge(before).uncovered).toEqual(['a', 'b', 'c']);
    expect(judge([lease(0, 4, ['a', 'x']), lease(1, 4, ['c'])], moved).uncovered).toEqual(['a', 'b']);
    // Once worker-0 reloaded (its own share only), b is uncovered until worker-1 runs it.
    expect(judge([lease(0, 5, ['a']), lease(1, 4, ['c'])], moved).uncovered).toEqual(['b']);
  });


  it('a worker that reloads by itself (no restart due) is never credited with the share it had before: it may have stopped it (the simulator, bbm-hot-reload-status-credit)', () => {
    const v5 = parse(render({ version: 5, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 5 }, 'swarm-worker-1': { jobs: ['b', 'c'], version: 5 } } }));
    const moved = { version: 5, moves: [{ job: 'b', from: 'swarm-worker-0', to: 'swarm-worker-1' }] };
    const c = computeCoverage({
      jobs,
      config: v5,
      pods: podsByWorker('swarm-worker', 2, [pod(0), pod(1)]),
      leases: [lease(0, 4, ['a', 'b']), lease(1, 4, ['c'])],
      restartPending: new Set(),
      lastChange: moved,
    });
    expect(c.uncovered).toEqual(['a', 'b', 'c']);
  });
  it('pods that do not declare acknowledgements are inferred (unverified): Ready and no restart pending', () => {
    const plain = { labels: { app: 'swarm-worker' } };
    const c = coverage([pod(0, plain), pod(1, plain)], [], ['swarm-worker-1']);
    expect(c.uncovered).toEqual(['c']);
    expect(c.unverified).toBe(2);
    expect(c.workers.get('swarm-worker-0')).toEqual({ state: 'Inferred' });
  });
});

describe('computeStatus from acknowledgements', () => {
  const swarm = validSwarm(swarmOf({ jobs }));

  it('is Ready with uncoveredJobs 0 only once every job is acknowledged', () => {
    const s = computeStatus({ swarm, now, statefulSet: sts(2), config, pods: [pod(0), pod(1)], leases: [lease(0, 4, ['a', 'b']), lease(1, 4, ['c'])] });
    expect(s).toMatchObject({ phase: 'Running', uncoveredJobs: 0, unverifiedJobs: 0 });
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'True', reason: 'Converged' });
    expect(s.workers?.map((w) => [w.name, w.coverage, w.runningVersion])).toEqual([
      ['swarm-worker-0', 'Acknowledged', 4],
      ['swarm-worker-1', 'Acknowledged', 4],
    ]);
  });

  it('never Ready while a job is uncovered: JobsUncovered names the jobs', () => {
    const s = computeStatus({ swarm, now, statefulSet: sts(2), config, pods: [pod(0), pod(1)], leases: [lease(0, 3, ['a'])] });
    expect(s).toMatchObject({ phase: 'Updating', uncoveredJobs: 3 });
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'JobsUncovered', message: '3 job(s) run by no acknowledged, Ready worker: a, b, c' });
  });

  it('0 replicas with jobs is not Ready', () => {
    const empty = parse(render({ version: 5, workloads: {} }));
    const s = computeStatus({ swarm, now, statefulSet: sts(0), config: empty, pods: [] });
    expect(s).toMatchObject({ uncoveredJobs: 3 });
    expect(s.conditions?.find((c) => c.type === 'Ready')).toMatchObject({ status: 'False', reason: 'JobsUncovered' });
  });

  it('inferred coverage is Ready but says how many jobs are unverified', () => {
    const plain = { labels: { app: 'swarm-worker' } };
    const s = computeStatus({ swarm, now, statefulSet: sts(2), config, pods: [pod(0, plain), pod(1, plain)] });
    expect(s).toMatchObject({ phase: 'Running', uncoveredJobs: 0, unverifiedJobs: 3 });
    expect(s.conditions?.find((c) => c.type === 'Ready')?.message).toMatch(/3 job\(s\) unverified/);
  });
});

describe('status while restarts are due (policy Restart, acknowledging workers)', () => {
  it('kubectl scale sts 2 → 3: the losers still run the moved jobs, so none is reported uncovered before anyone reloaded', async () => {
    const { kube, env } = stubWorld(2, { jobs: seedStreams });
    const key = { namespace: 'ns', name: 'swarm' };
    const acknowledging = () => {
      for (const p of kube.pods.values()) p.labels = { ...p.labels, ...acknowledgingLabels };
    };
    const acknowledgeAll = () => {
      const config = parse(kube.configFor('ns', 'swarm-worker-config')!);
      for (const p of kube.pods.values()) if (config.workloads[p.name]) kube.leases.set(`ns/${p.name}`, runs(p, config));
    };
    acknowledging();
    await reconcileAssign(env, key);
    acknowledgeAll();
    await reconcileAssign(env, key);
    expect(kube.swarms.get('ns/swarm')!.status).toMatchObject({ phase: 'Running', version: 1, uncoveredJobs: 0 });

    // The StatefulSet grows first; its new pod has read no share yet.
    kube.setStatefulSet('ns', 'swarm-worker', 3);
    kube.startPod('ns', 'swarm-worker', 2);
    acknowledging();
    await reconcileAssign(env, key);
    const status = kube.swarms.get('ns/swarm')!.status!;
    expect(status.version).toBe(2);
    // Only the new worker's jobs lack a report of their own, and their old owners report running them.
    expect(status.uncoveredJobs).toBe(0);
    expect(status.workers!.map((w) => w.coverage)).toEqual(['Acknowledged', 'Acknowledged', 'Uncovered']);
    expect(status.phase).not.toBe('Running');
  });
});
