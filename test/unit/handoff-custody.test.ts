// inCustody (lib/decisions/handoff.ts): the jobs of a worker out of service go to serving peers,
// and never onto a worker that runs a dedicated job alone while another peer serves (the
// simulator's power campaign: custody by job count picked the dedicated worker, it has the fewest).
import { describe, expect, it } from 'vitest';
import { inCustody, sharedInCustody, stageHandoff } from '../../lib/decisions/handoff.js';
import type { WorkerFacts } from '../../lib/decisions/restarts.js';
import { parse, render } from '../../lib/workerconfig/index.js';
import { workerPod } from '../support/views.js';

const serving = (ordinal: number): WorkerFacts => ({ pod: workerPod(ordinal), ack: 'runs' });
const crashLooping = (ordinal: number): WorkerFacts => ({ pod: { ...workerPod(ordinal), ready: false, waiting: { reason: 'CrashLoopBackOff' } } });
const stuck = (ordinal: number): WorkerFacts => ({ pod: { ...workerPod(ordinal), ready: false, phase: 'Pending', unschedulable: '0/1 nodes are available' } });

describe('custody of an out-of-service worker\'s jobs', () => {
  const target = { 'swarm-worker-0': ['dedicated'], 'swarm-worker-1': ['a', 'b', 'c'], 'swarm-worker-2': ['d', 'e', 'f'] };
  const previous = parse(render({ version: 3, workloads: Object.fromEntries(Object.entries(target).map(([w, jobs]) => [w, { jobs, version: 3 }])) }));

  it('goes to the serving peers without a dedicated job, however few jobs the dedicated worker has', () => {
    const facts = (w: string) => (w === 'swarm-worker-2' ? crashLooping(2) : serving(Number(w.slice(-1))));
    const custody = inCustody(target, previous, facts, { replacesUnderOwnName: true }, new Set(['dedicated']));
    expect(custody.target['swarm-worker-0']).toEqual(['dedicated']);
    expect(custody.target['swarm-worker-1']).toEqual(['a', 'b', 'c', 'd', 'e', 'f']);
    expect(custody.target['swarm-worker-2']).toEqual([]);
  });

  it('falls back to the dedicated worker when it is the only one serving', () => {
    const facts = (w: string) => (w === 'swarm-worker-0' ? serving(0) : crashLooping(Number(w.slice(-1))));
    const custody = inCustody(target, previous, facts, { replacesUnderOwnName: true }, new Set(['dedicated']));
    expect([...custody.target['swarm-worker-0']!].sort()).toEqual(['a', 'b', 'c', 'd', 'dedicated', 'e', 'f']);
  });

  it('covers a pod that cannot start (unschedulable, an image that cannot be pulled), not only a crash loop', () => {
    const facts = (w: string) => (w === 'swarm-worker-2' ? stuck(2) : serving(Number(w.slice(-1))));
    const custody = inCustody(target, previous, facts, { replacesUnderOwnName: false }, new Set());
    expect(custody.target['swarm-worker-2']).toEqual([]);
    expect(Object.values(custody.target).flat().sort()).toEqual(['a', 'b', 'c', 'd', 'dedicated', 'e', 'f']);
  });
});

// The simulator's dedication invariant (corpus custody-onto-dedicated-worker): status said every dedication was
// honoured while custody ran a dedicated job beside others; status now counts what the shares written say.
describe('dedications in custody, as status counts them (sharedInCustody)', () => {
  it('a dedicated job a custodian runs beside its own jobs is unhonoured; one alone, or already counted, is not', () => {
    const dedicated = new Set(['d1', 'd2', 'd3']);
    const target = { w0: ['a', 'd1'], w1: ['d2'], w2: ['b', 'd3'], w3: [] };
    expect(sharedInCustody(target, dedicated, [{ job: 'd3', reason: 'not enough replicas' }]).map((u) => u.job)).toEqual(['d1']);
    expect(sharedInCustody(target, new Set(), [])).toEqual([]);
  });
});

// The simulator's corpus replaced-pod-custodian-departing (seed 308): a StatefulSet pod deleted by hand while
// the Swarm scaled down to it alone; its jobs were already published, in custody, to a pod now past the replicas.
describe('a replaced pod whose jobs a departing pod already holds', () => {
  const target = { 'swarm-worker-0': ['a', 'b'] };
  const terminating = (ordinal: number): WorkerFacts => ({ pod: { ...workerPod(ordinal), ready: false, terminating: true }, ack: 'runs' });
  const facts = (w: string) => (w === 'swarm-worker-0' ? terminating(0) : serving(Number(w.slice(-1))));

  it('waits for its share to empty (handover) instead of stopping first', () => {
    const previous = parse(render({ version: 4, workloads: { 'swarm-worker-0': { jobs: ['a', 'b'], version: 4 }, 'swarm-worker-1': { jobs: ['a', 'b'], version: 4 } } }));
    expect(inCustody(target, previous, facts, { replacesUnderOwnName: true }).handover).toBe(true);
  });

  it('stops at once when no serving pod holds them: waiting would only hold its replacement back', () => {
    const previous = parse(render({ version: 4, workloads: { 'swarm-worker-0': { jobs: ['a', 'b'], version: 4 }, 'swarm-worker-1': { jobs: ['a'], version: 4 } } }));
    expect(inCustody(target, previous, facts, { replacesUnderOwnName: true }).handover).toBe(false);
  });
});

// The simulator's corpus replaced-pod-departing-pod-serves-scaled-by-hand and -rollout (seeds 2310, 2137): no
// worker of the assignment serves (one replaced, the other crash-looping), but a pod past the replicas still does
// (OrderedReady keeps it while a predecessor is unhealthy). It takes custody, so the replaced pod waits for its
// share to empty.
describe('a departing pod that still serves: the custodian of last resort', () => {
  const target = { 'swarm-worker-0': ['a', 'b', 'c'], 'swarm-worker-1': ['d', 'e'] };
  const previous = parse(render({ version: 7, workloads: { 'swarm-worker-0': { jobs: ['a', 'b', 'c', 'd', 'e'], version: 7 }, 'swarm-worker-1': { jobs: [], version: 7 } } }));
  const terminating = (ordinal: number): WorkerFacts => ({ pod: { ...workerPod(ordinal), ready: false, terminating: true }, ack: 'runs' });
  const worlds = {
    lastResort: (w: string) => (w === 'swarm-worker-0' ? terminating(0) : w === 'swarm-worker-1' ? crashLooping(1) : serving(2)),
    departingGone: (w: string) => (w === 'swarm-worker-0' ? terminating(0) : w === 'swarm-worker-1' ? crashLooping(1) : terminating(2)),
    peerServes: (w: string) => (w === 'swarm-worker-0' ? terminating(0) : serving(Number(w.slice(-1)))),
  };
  const departing = ['swarm-worker-2'];

  it('takes every out-of-service worker\'s jobs, and the replaced pod hands over (waits) instead of stopping first', () => {
    const custody = inCustody(target, previous, worlds.lastResort, { replacesUnderOwnName: true, departing });
    expect(custody.handover).toBe(true);
    expect(custody.target).toEqual({ 'swarm-worker-0': [], 'swarm-worker-1': [], 'swarm-worker-2': ['a', 'b', 'c', 'd', 'e'] });
  });

  it('is only a last resort: a serving worker of the assignment takes custody instead', () => {
    const custody = inCustody(target, previous, worlds.peerServes, { replacesUnderOwnName: true, departing });
    expect(custody.target).toEqual({ 'swarm-worker-0': [], 'swarm-worker-1': ['d', 'e', 'a', 'b', 'c'] });
  });

  it('is no custodian once it stops serving (terminating): the replaced pod stops at once, as before', () => {
    const custody = inCustody(target, previous, worlds.departingGone, { replacesUnderOwnName: true, departing });
    expect(custody).toEqual({ target, handover: false });
  });

  it('changes nothing under break-before-make: no pod serves in the assignment, the replaced one is left as it is', () => {
    const custody = inCustody(target, previous, worlds.lastResort, { replacesUnderOwnName: true, breaksFirst: true, departing });
    expect(custody.target['swarm-worker-2']).toBeUndefined();
  });

  it('is staged: the replaced pod keeps its jobs (releasing) until the custodian serves and acknowledges them', () => {
    const { target: next } = inCustody(target, previous, worlds.lastResort, { replacesUnderOwnName: true, departing });
    const staged = stageHandoff({ handoff: 'MakeBeforeBreak', previous, target: next, facts: worlds.lastResort });
    expect(staged.jobs['swarm-worker-2']).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(staged.jobs['swarm-worker-0']).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(staged.marks['swarm-worker-0']).toEqual({ releasing: ['a', 'b', 'c', 'd', 'e'] });
  });
});

// The simulator's seed 5960 at 9cf9ca0 (corpus: replaced-pod-waits-for-starting-peer): a StatefulSet pod deleted by
// hand while its event was lost, then `ordinals.start` moved: every other pod of the old range terminating, the new
// range's pods starting. Stopping at once left its jobs with nobody for the seconds until a new pod served.
describe('a replaced pod with no serving peer but a peer starting', () => {
  const target = { 'swarm-worker-0': ['a', 'b'], 'swarm-worker-1': ['c'] };
  const previous = parse(render({ version: 5, workloads: { 'swarm-worker-0': { jobs: ['a', 'b'], version: 5 }, 'swarm-worker-1': { jobs: ['c'], version: 5 } } }));
  const terminating: WorkerFacts = { pod: { ...workerPod(0), ready: false, terminating: true }, ack: 'runs' };
  const starting: WorkerFacts = { pod: { ...workerPod(1), ready: false, phase: 'Pending' } };

  it('waits (handover) for the starting peer to serve and take custody', () => {
    const custody = inCustody(target, previous, (w) => (w === 'swarm-worker-0' ? terminating : starting), { replacesUnderOwnName: true });
    expect(custody).toEqual({ target, handover: true });
  });

  it('stops at once when that peer cannot start (stuck): waiting would only hold its replacement back', () => {
    const custody = inCustody(target, previous, (w) => (w === 'swarm-worker-0' ? terminating : stuck(1)), { replacesUnderOwnName: true });
    expect(custody).toEqual({ target, handover: false });
  });
});
