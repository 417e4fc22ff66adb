// The simulator's corpus replaced-pod-stops-while-departing-pods-serve (seed 88, found by `--compare --without
// coalescer`, then reached with every shortcut on): a rolling restart reached pod 0 as the Swarm was scaled 3 → 1;
// the departing pods served but held only some of its jobs, so the handover annotation was withdrawn and pod 0
// stopped the rest at once. A serving departing pod is the custodian of last resort (lib/decisions/handoff.ts).
import { describe, expect, it } from 'vitest';
import { inCustody } from '../../lib/decisions/handoff.js';
import type { WorkerFacts } from '../../lib/decisions/restarts.js';
import { parse, render } from '../../lib/workerconfig/index.js';
import { workerPod } from '../support/views.js';

describe('a replaced pod whose departing peers serve but hold only some of its jobs', () => {
  const target = { 'swarm-worker-0': ['a', 'b', 'c'] };
  const previous = parse(
    render({
      version: 5,
      workloads: {
        'swarm-worker-0': { jobs: ['a', 'b', 'c'], version: 5 },
        'swarm-worker-1': { jobs: ['a'], version: 4, releasing: ['a'] },
      },
    }),
  );
  const terminating: WorkerFacts = { pod: { ...workerPod(0), ready: false, terminating: true }, ack: 'runs' };
  const facts = (w: string): WorkerFacts => (w === 'swarm-worker-0' ? terminating : { pod: workerPod(Number(w.slice(-1))), ack: 'runs' });
  const pool = { replacesUnderOwnName: true, departing: ['swarm-worker-1', 'swarm-worker-2'] };

  it('hands every job to them, the one each already runs kept where it is, and waits for its share to empty', () => {
    const custody = inCustody(target, previous, facts, pool);
    expect(custody.handover).toBe(true);
    expect(custody.target['swarm-worker-0']).toEqual([]);
    expect(custody.target['swarm-worker-1']).toContain('a');
    expect(Object.values(custody.target).flat().sort()).toEqual(['a', 'b', 'c']);
  });
});
