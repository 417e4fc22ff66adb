// Failover on Swarm's side (docs/failure-detection.md): a worker that
// heartbeats (its Lease announces protocol 2) and whose running pod turned
// NotReady has expired; its jobs go to serving peers, staged like any hand-off
// (under BreakBeforeMake it counts as stopped: it fenced itself), status says
// who expired and since when, and spec.failover reaches the workers in
// failover.yml. Pure decisions over plain data.
import { describe, expect, it } from 'vitest';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { inCustody, stageHandoff } from '../../lib/decisions/handoff.js';
import type { WorkerFacts } from '../../lib/decisions/restarts.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { isExpired } from '../../lib/decisions/workers.js';
import type { LeaseView, PodView } from '../../lib/kube/types.js';
import { FAILOVER_KEY, FENCED_ANNOTATION, PROTOCOL_ANNOTATION, assignmentOf, nextConfig, parse, parseFailover, render } from '../../lib/workerconfig/index.js';
import { swarmOf } from '../support/fixtures.js';
import { acknowledgement, acknowledgingLabels, configOf, converge, runs, sts, validSwarm, workerPod, written } from '../support/views.js';

const STARTED = '2026-11-27T10:00:00Z';
const pod = (ordinal: number, over: Partial<PodView> = {}): PodView =>
  workerPod(ordinal, { labels: acknowledgingLabels, startedAt: STARTED, readinessChangedAt: '2026-11-27T10:00:01Z', ...over });
/** Its running container lost readiness: fenced, or frozen. */
const unready = (ordinal: number, since = '2026-11-27T10:05:00Z') => pod(ordinal, { ready: false, readinessChangedAt: since });

describe('an expired worker', () => {
  it('heartbeats and lost readiness after its container started; a container not Ready since it (re)started has not expired', () => {
    expect(isExpired({ pod: unready(1), heartbeats: true })).toBe(true);
    expect(isExpired({ pod: unready(1), heartbeats: false })).toBe(false); // protocol 1: never expired (worker-protocol §8)
    expect(isExpired({ pod: unready(1, STARTED), heartbeats: true })).toBe(false);
    expect(isExpired({ pod: { ...unready(1), terminating: true }, heartbeats: true })).toBe(false);
    expect(isExpired({ pod: { ...unready(1), waiting: { reason: 'CrashLoopBackOff' } }, heartbeats: true })).toBe(false);
    expect(isExpired({ pod: pod(1), heartbeats: true })).toBe(false);
  });

  const target = { 'swarm-worker-0': ['a', 'b'], 'swarm-worker-1': ['c', 'd'], 'swarm-worker-2': ['e', 'f'] };
  const previous = parse(render({ version: 3, workloads: Object.fromEntries(Object.entries(target).map(([w, jobs]) => [w, { jobs, version: 3 }])) }));
  const facts = (expired: string[]) => (w: string): WorkerFacts =>
    expired.includes(w) ? { pod: unready(Number(w.slice(-1))), ack: 'runs', heartbeats: true } : { pod: pod(Number(w.slice(-1))), ack: 'runs', heartbeats: true };

  it('has its jobs held by serving peers under either handoff', () => {
    for (const breaksFirst of [false, true]) {
      const custody = inCustody(target, previous, facts(['swarm-worker-2']), { replacesUnderOwnName: true, breaksFirst });
      expect(custody.target['swarm-worker-2']).toEqual([]);
      expect(Object.values(custody.target).flat().sort()).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    }
  });

  it('breaking first with no serving peer: its jobs await it, so its share empties and it can come back', () => {
    const all = facts(['swarm-worker-0', 'swarm-worker-1', 'swarm-worker-2']);
    const custody = inCustody(target, previous, all, { replacesUnderOwnName: true, breaksFirst: true });
    expect(custody.target).toEqual(target);
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous, target: custody.target, facts: all });
    expect(Object.values(staged.jobs).flat()).toEqual([]);
    expect(staged.marks).toEqual({ 'swarm-worker-0': { awaiting: ['a', 'b'] }, 'swarm-worker-1': { awaiting: ['c', 'd'] }, 'swarm-worker-2': { awaiting: ['e', 'f'] } });
    expect(inCustody(target, previous, all, { replacesUnderOwnName: true }).target).toEqual(target);
  });

  // The simulator's seed 4918 (corpus bbm-expired-gainer-forgets-holder): job-3 moved from workers-1 (a pod
  // departing in a scale-down, its share not yet reloaded) to workers-0 as workers-0 expired with no serving peer.
  // Dropped to nobody, the move was forgotten: once workers-0 came back it gained job-3 at once, beside workers-1.
  it('breaking first with no serving peer: a job on its way to it still waits for the holder that may run it', () => {
    const v11 = parse(
      render({
        version: 11,
        workloads: { 'swarm-worker-0': { jobs: [], version: 11 }, 'swarm-worker-1': { jobs: ['job-2', 'job-3'], version: 11 }, 'swarm-worker-2': { jobs: ['job-1'], version: 1 } },
      }),
    );
    const moved = { 'swarm-worker-0': ['job-3'], 'swarm-worker-1': ['job-2'], 'swarm-worker-2': ['job-1'] };
    const departing = (ordinal: number, ack: WorkerFacts['ack']): WorkerFacts => ({ pod: pod(ordinal, { terminating: true }), ack, heartbeats: true });
    const expired = (w: string): WorkerFacts => (w === 'swarm-worker-0' ? { pod: unready(0), ack: 'runs', heartbeats: true } : departing(Number(w.slice(-1)), 'runs'));
    const custody = inCustody(moved, v11, expired, { replacesUnderOwnName: true, breaksFirst: true });
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v11, target: custody.target, facts: expired });
    const v12 = nextConfig(v11, staged.jobs, { marks: staged.marks });
    expect(v12.workloads['swarm-worker-0']).toMatchObject({ jobs: [], awaiting: ['job-3'] });
    expect(v12.workloads['swarm-worker-1']!.jobs).toEqual(['job-2']);
    // workers-0 is back (a new container); workers-1 has not acknowledged giving job-3 up: job-3 still waits.
    const back = (behind: boolean) => (w: string): WorkerFacts =>
      w === 'swarm-worker-0' ? { pod: pod(0), ack: 'runs', heartbeats: true } : departing(Number(w.slice(-1)), w === 'swarm-worker-1' && behind ? 'differs' : 'runs');
    const target = assignmentOf(v12);
    expect(target['swarm-worker-0']).toEqual(['job-3']);
    const waiting = stageHandoff({ handoff: 'BreakBeforeMake', previous: v12, target, facts: back(true) });
    expect(waiting.jobs['swarm-worker-0']).toEqual([]);
    expect(waiting.marks['swarm-worker-0']).toEqual({ awaiting: ['job-3'] });
    // Once it has, workers-0 gains it.
    expect(stageHandoff({ handoff: 'BreakBeforeMake', previous: v12, target, facts: back(false) }).jobs['swarm-worker-0']).toEqual(['job-3']);
  });

  it('breaking first, a stuck worker (crash loop) is not taken into custody: only an expired one fenced itself', () => {
    const crash = (w: string): WorkerFacts => (w === 'swarm-worker-2' ? { pod: { ...pod(2), ready: false, waiting: { reason: 'CrashLoopBackOff' } } } : facts([])(w));
    expect(inCustody(target, previous, crash, { replacesUnderOwnName: true, breaksFirst: true }).target).toEqual(target);
  });
});

describe('the assign decision with failover', () => {
  const jobs = Array.from({ length: 6 }, (_, i) => `job-${i}`);
  const withProtocol2 = (l: LeaseView) => ({ ...l, annotations: { ...l.annotations, [PROTOCOL_ANNOTATION]: '2' } });

  for (const handoff of ['BreakBeforeMake', 'MakeBeforeBreak'] as const) {
    it(`${handoff}: publishes failover.yml, and hands an expired worker's jobs to its peer`, () => {
      const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff }, failover: {} }));
      expect(swarm.spec.failover).toEqual({ leaseSeconds: 15 });
      const pods = [pod(0), pod(1)];
      const cm = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods }));
      expect(parseFailover(cm.data[FAILOVER_KEY]!)).toEqual({ leaseSeconds: 15, handoff });
      const v1 = configOf(cm);
      const leases = pods.map((p) => withProtocol2(runs(p, v1)));
      const lost = v1.workloads['swarm-worker-1']!.jobs;
      const d = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: cm, pods: [pods[0]!, unready(1)], leases }));
      const v2 = configOf(d.configMap);
      expect(v2.version).toBeGreaterThan(v1.version);
      if (handoff === 'BreakBeforeMake') {
        // It fenced itself: the peer gains the jobs at once, nothing awaits its acknowledgement.
        expect(v2.workloads['swarm-worker-1']!.jobs).toEqual([]);
        expect(v2.workloads['swarm-worker-0']!.jobs).toEqual(expect.arrayContaining([...lost]));
        expect(v2.workloads['swarm-worker-0']!.awaiting).toBeUndefined();
      } else {
        // The peer starts them first; the expired one keeps running them (releasing) until the peer acknowledges.
        expect(v2.workloads['swarm-worker-0']!.jobs).toEqual(expect.arrayContaining([...lost]));
        expect(v2.workloads['swarm-worker-1']!.releasing).toEqual([...lost]);
      }
    });
  }

  it('a protocol-1 worker whose pod turns NotReady keeps its share (it never fences)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff: 'BreakBeforeMake' }, failover: {} }));
    const pods = [pod(0), pod(1)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods }));
    const v1 = configOf(cm);
    const d = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: cm, pods: [pods[0]!, unready(1)], leases: pods.map((p) => runs(p, v1)) }));
    expect(d.write).toBe('none');
  });

  it('drops failover.yml once spec.failover is unset, and refuses configKey failover.yml with failover', () => {
    const on = validSwarm(swarmOf({ jobs, failover: { leaseSeconds: 6 } }));
    const cm = written(decideConfigMap({ swarm: on, statefulSet: sts(2), configMap: undefined, pods: [] }));
    expect(cm.data[FAILOVER_KEY]).toBe('leaseSeconds: 6\nhandoff: MakeBeforeBreak\n');
    const off = validSwarm(swarmOf({ jobs }));
    const d = converge(decideConfigMap({ swarm: off, statefulSet: sts(2), configMap: cm, pods: [] }));
    expect(d.patch?.data).toEqual({ [FAILOVER_KEY]: null });
    expect(() => validSwarm(swarmOf({ jobs, configKey: 'failover.yml', failover: {} }))).toThrow(/failover.yml/);
  });

  it('status says which worker expired and since when, under its own reason (one Event per transition)', () => {
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff: 'BreakBeforeMake' }, failover: {} }));
    const pods = [pod(0), pod(1)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods }));
    const v1 = configOf(cm);
    const leases = pods.map((p) => withProtocol2(runs(p, v1)));
    const moved = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: cm, pods: [pods[0]!, unready(1)], leases }));
    const v2 = configOf(moved);
    const now = [withProtocol2(runs(pods[0]!, v2)), leases[1]!];
    const status = computeStatus({
      swarm,
      statefulSet: { ...sts(2), readyReplicas: 1 },
      pods: [pods[0]!, unready(1)],
      config: v2,
      leases: now,
      now: '2026-11-27T10:05:30Z',
    });
    const ready = status.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready.reason).toBe('WorkersExpired');
    expect(ready.message).toContain('swarm-worker-1 (expired: NotReady since 2026-11-27T10:05:00Z');
    expect(ready.message).toContain('every job runs on an acknowledged worker');
  });

  it('a worker that says it fenced (k8slab.info/fenced, no job) has expired though its pod is Ready or its container new; status names it', () => {
    expect(isExpired({ pod: pod(1), heartbeats: true, fenced: true })).toBe(true);
    expect(isExpired({ pod: unready(1, STARTED), heartbeats: true, fenced: true })).toBe(true); // a new process that starts fenced
    expect(isExpired({ pod: { ...pod(1), terminating: true }, heartbeats: true, fenced: true })).toBe(false);
    const swarm = validSwarm(swarmOf({ jobs, restart: { policy: 'None', handoff: 'BreakBeforeMake' }, failover: {} }));
    const pods = [pod(0), pod(1)];
    const cm = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods }));
    const v1 = configOf(cm);
    const says = (jobs: readonly string[]) => {
      const l = acknowledgement(pods[1]!, v1.version, jobs);
      return { ...l, annotations: { ...l.annotations, [PROTOCOL_ANNOTATION]: '2', [FENCED_ANNOTATION]: 'true' } };
    };
    // Its pod still Ready (the probe has not failed 12 times yet): the share empties now, the peer gains at once.
    const leases = [withProtocol2(runs(pods[0]!, v1)), says([])];
    const moved = written(decideConfigMap({ swarm, statefulSet: sts(2), configMap: cm, pods, leases }));
    const v2 = configOf(moved);
    expect(v2.workloads['swarm-worker-1']!.jobs).toEqual([]);
    expect(v2.workloads['swarm-worker-0']!.jobs).toEqual([...jobs].sort());
    expect(v2.workloads['swarm-worker-0']!.awaiting).toBeUndefined();
    // One that says fenced but still names jobs is not believed: nothing moves on its word.
    const still = converge(decideConfigMap({ swarm, statefulSet: sts(2), configMap: cm, pods, leases: [leases[0]!, says(v1.workloads['swarm-worker-1']!.jobs)] }));
    expect(still.write).toBe('none');
    const status = computeStatus({ swarm, statefulSet: sts(2), pods: [pods[0]!, unready(1, STARTED)], config: v2, leases: [withProtocol2(runs(pods[0]!, v2)), says([])], now: '2026-11-27T10:05:30Z' });
    const ready = status.conditions!.find((c) => c.type === 'Ready')!;
    expect(ready.reason).toBe('WorkersExpired');
    expect(ready.message).toContain('swarm-worker-1 (expired: fenced, its jobs handed to peers)');
  });
});
