// npm start's live view (dev/live-view.ts): a scale 2 → 3 of six jobs as the
// broker's deliveries and the Swarm views read after them; only the steps that
// change something print, each on one line.
import { describe, expect, it } from 'vitest';
import { describeEvent, describeMoves, gainsAndLosses, liveView, sharesTable, stepFromDelivery, type Step, type ViewState } from '../../dev/live-view.js';
import { swarmView, type SwarmView } from '../../lib/introspection/view.js';
import type { Move } from '../../lib/plan/index.js';

const SWARM = 'swarm/swarm-worker';
const worker = (n: number) => `swarm-worker-${n}`;

function view(version: number, shares: Record<string, { jobs: string[]; version: number }>, moves: Move[], pending: string[] = []): SwarmView {
  return swarmView({
    swarm: { metadata: { namespace: 'swarm', name: 'swarm-worker' } },
    config: { version, workloads: shares },
    pendingRestarts: pending,
    lastChange: { version, moves },
  });
}

const v1 = view(
  1,
  { [worker(0)]: { jobs: ['a', 'b', 'c'], version: 1 }, [worker(1)]: { jobs: ['d', 'e', 'f'], version: 1 } },
  ['a', 'b', 'c', 'd', 'e', 'f'].map((job, i) => ({ job, from: null, to: worker(i < 3 ? 0 : 1) })),
);
const v2Moves: Move[] = [
  { job: 'c', from: worker(0), to: worker(2) },
  { job: 'f', from: worker(1), to: worker(2) },
];
const v2 = view(
  2,
  { [worker(0)]: { jobs: ['a', 'b'], version: 2 }, [worker(1)]: { jobs: ['d', 'e'], version: 2 }, [worker(2)]: { jobs: ['c', 'f'], version: 2 } },
  v2Moves,
  [worker(0), worker(1)],
);

const step = (time: string, fn: string, swarms: Step['swarms'], extra: Partial<Step> = {}): Step => ({
  time,
  fn,
  trigger: 'StatefulSet swarm-worker update',
  status: 202,
  attempt: 1,
  swarms,
  ...extra,
});

function play(steps: Array<[Step, SwarmView | undefined]>): string[] {
  let state: ViewState = {};
  const out: string[] = [];
  for (const [s, v] of steps) {
    const r = liveView(state, s, v ? { [SWARM]: v } : {});
    state = r.state;
    out.push(...r.lines);
  }
  return out;
}

describe('live view', () => {
  it('prints the first assignment, a scale-up and its handoff, one line per step that changed something', () => {
    const lines = play([
      [step('12:00:58', 'assign', [{ swarm: SWARM, result: 'notified' }], { status: 200, trigger: 'Swarm swarm-worker add' }), v1],
      [step('12:00:58', 'restart', [{ swarm: SWARM, result: 'idle', restarted: [], outstanding: [] }]), v1],
      [step('12:00:59', 'assign', [{ swarm: SWARM, result: 'unchanged' }]), v1],
      [step('12:01:03', 'assign', [{ swarm: SWARM, result: 'notified' }], { status: 200 }), v2],
      [step('12:01:03', 'restart', [{ swarm: SWARM, result: 'waiting', outstanding: [worker(0), worker(1)], waiting: `${worker(0)} waits for ${worker(2)}` }]), v2],
      [step('12:01:03', 'restart', [{ swarm: SWARM, result: 'waiting', outstanding: [worker(0), worker(1)], waiting: `${worker(0)} waits for ${worker(2)}` }]), v2],
      [step('12:01:04', 'restart', [{ swarm: SWARM, result: 'restarting', restarted: [worker(0)], outstanding: [worker(0), worker(1)], waiting: `${worker(0)} restarting` }]), v2],
      [step('12:01:05', 'restart', [{ swarm: SWARM, result: 'restarting', restarted: [worker(1)], outstanding: [worker(1)] }]), v2],
      [step('12:01:06', 'restart', [{ swarm: SWARM, result: 'idle', restarted: [], outstanding: [] }]), v2],
      [step('12:01:07', 'restart', [{ swarm: SWARM, result: 'idle', restarted: [], outstanding: [] }]), v2],
    ]);
    expect(lines).toEqual([
      '12:00:58 assign  swarm/swarm-worker  v1  2 workers  6 new jobs',
      '         worker          ver  jobs  share',
      '         swarm-worker-0  v1      3  a b c',
      '         swarm-worker-1  v1      3  d e f',
      '12:01:03 assign  swarm/swarm-worker  v2  3 workers  moved 2 jobs (swarm-worker-0 → swarm-worker-2: 1, swarm-worker-1 → swarm-worker-2: 1)',
      '         worker          ver  jobs  share',
      '         swarm-worker-0  v2      2  a b',
      '         swarm-worker-1  v2      2  d e',
      '         swarm-worker-2  v2      2  c f',
      '12:01:03 restart swarm/swarm-worker  waiting: swarm-worker-0 waits for swarm-worker-2',
      '12:01:04 restart swarm/swarm-worker  swarm-worker-0 restarted (loses 1)',
      '12:01:05 restart swarm/swarm-worker  swarm-worker-1 restarted (loses 1)',
      '12:01:06 restart swarm/swarm-worker  handoff done: every worker runs its v2 share',
    ]);
  });

  it('ends a handoff made by a single reconcile', () => {
    const lines = play([
      [step('12:00:58', 'assign', [{ swarm: SWARM, result: 'notified' }], { status: 200 }), v2],
      [step('12:00:59', 'restart', [{ swarm: SWARM, result: 'restarting', restarted: [worker(0), worker(1)], outstanding: [] }]), v2],
      [step('12:01:00', 'restart', [{ swarm: SWARM, result: 'idle', restarted: [], outstanding: [] }]), v2],
    ]);
    expect(lines.filter((l) => l.includes('restart '))).toEqual([
      '12:00:59 restart swarm/swarm-worker  swarm-worker-0 restarted (loses 1)',
      '12:00:59 restart swarm/swarm-worker  swarm-worker-1 restarted (loses 1)',
      '12:00:59 restart swarm/swarm-worker  handoff done: every worker runs its v2 share',
    ]);
  });

  it('prints a problem once until it changes, and every failed answer', () => {
    const blocked = { swarm: SWARM, result: 'blocked', reason: 'StatefulSetNotFound', message: 'no StatefulSet swarm/swarm-worker' };
    const lines = play([
      [step('09:00:00', 'assign', [blocked]), undefined],
      [step('09:00:01', 'assign', [blocked]), undefined],
      [step('09:00:02', 'assign', [], { status: 503, attempt: 2, error: 'kube-apiserver unavailable' }), undefined],
      [step('09:00:03', 'assign', [{ ...blocked, result: 'invalid', reason: 'InvalidSpec', message: 'spec.jobs: must be unique' }]), undefined],
    ]);
    expect(lines).toEqual([
      '09:00:00 assign  swarm/swarm-worker  blocked: StatefulSetNotFound — no StatefulSet swarm/swarm-worker',
      '09:00:02 assign  StatefulSet swarm-worker update → 503 (attempt 2): kube-apiserver unavailable',
      '09:00:03 assign  swarm/swarm-worker  invalid: InvalidSpec — spec.jobs: must be unique',
    ]);
  });

  it('summarises moves by pair, new and removed jobs', () => {
    expect(describeMoves([])).toBe('no job moved');
    expect(
      describeMoves([
        { job: 'a', from: 'w-0', to: 'w-2' },
        { job: 'b', from: 'w-0', to: 'w-2' },
        { job: 'c', from: 'w-1', to: 'w-2' },
        { job: 'n', from: null, to: 'w-1' },
        { job: 'r', from: 'w-0', to: null },
      ]),
    ).toBe('moved 3 jobs (w-0 → w-2: 2, w-1 → w-2: 1)  1 new job  1 job removed');
    expect(gainsAndLosses(worker(2), v2Moves)).toBe('gains 2');
    expect(gainsAndLosses(worker(3), v2Moves)).toBe('');
  });

  it('cuts a long share at a job boundary', () => {
    const jobs = Array.from({ length: 30 }, (_, i) => `stream-${String(i).padStart(2, '0')}`);
    const [, row] = sharesTable(view(1, { [worker(0)]: { jobs, version: 1 } }, []));
    expect(row).toBe('         swarm-worker-0  v1     30  stream-00 stream-01 stream-02 stream-03 stream-04 …');
  });

  it('turns broker deliveries into steps', () => {
    const source = { type: 'dev.knative.apiserver.resource.update', data: { kind: 'StatefulSet', metadata: { name: 'swarm-worker' } } };
    const changed = { type: 'info.k8slab.swarm.assignment.changed', data: { swarm: { namespace: 'swarm', name: 'swarm-worker', uid: 'u' }, version: 2, workers: [] } };
    expect(describeEvent(source)).toBe('StatefulSet swarm-worker update');
    expect(describeEvent(changed)).toBe('assignment.changed v2');
    expect(stepFromDelivery({ subscriber: 'swarm-assign', event: source, status: 200, attempt: 1, reply: changed }, '10:00:00')).toEqual({
      time: '10:00:00',
      fn: 'assign',
      trigger: 'StatefulSet swarm-worker update',
      status: 200,
      attempt: 1,
      swarms: [{ swarm: SWARM, result: 'notified' }],
    });
    const summary = { function: 'restart', swarms: [{ swarm: SWARM, result: 'idle', restarted: [], outstanding: [] }] };
    expect(stepFromDelivery({ subscriber: 'swarm-restart', event: changed, status: 202, attempt: 1, body: summary }, '10:00:01').swarms).toEqual(summary.swarms);
    expect(stepFromDelivery({ subscriber: 'swarm-restart', event: changed, status: 503, attempt: 3, body: { error: 'timeout', status: 503 } }, 't').error).toBe('timeout');
  });
});
