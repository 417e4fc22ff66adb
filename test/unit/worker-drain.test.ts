// The reference worker on SIGTERM: whether it leaves its StatefulSet (and so
// keeps its jobs until they are handed over) or stops at once.
import { describe, expect, it } from 'vitest';
import { drainsOnStop, waitUntilReleased } from '../../examples/worker/drain.js';
import { parse } from '../../lib/workerconfig/index.js';

describe('drainsOnStop', () => {
  it('a pod past the replicas drains (kubectl scale sts down); one within them is replaced under its name (a rolling update, a deletion)', () => {
    expect(drainsOnStop(3, { start: 0, replicas: 1 })).toBe(true);
    expect(drainsOnStop(1, { start: 0, replicas: 1 })).toBe(true);
    expect(drainsOnStop(0, { start: 0, replicas: 1 })).toBe(false);
    expect(drainsOnStop(2, { start: 0, replicas: 3 })).toBe(false);
  });

  it('counts from spec.ordinals.start; with the StatefulSet gone nobody takes over, so nobody drains', () => {
    expect(drainsOnStop(5, { start: 5, replicas: 2 })).toBe(false);
    expect(drainsOnStop(7, { start: 5, replicas: 2 })).toBe(true);
    expect(drainsOnStop(4, { start: 5, replicas: 2 })).toBe(true);
    expect(drainsOnStop(0, undefined)).toBe(false);
  });
});

describe('waitUntilReleased', () => {
  const holding = 'version: 2\nworkloads:\n  w-1:\n    jobs: [j1]\n    version: 1\n';
  const released = 'version: 3\nworkloads:\n  w-0:\n    jobs: [j1]\n    version: 3\n';

  it('waits through failed reads while the config gives the pod jobs, and returns once it gives none', async () => {
    const answers: Array<string | Error> = [holding, Object.assign(new Error('timeout'), { code: 503 }), holding, released];
    const errors: unknown[] = [];
    const read = async () => {
      const next = answers.shift()!;
      if (next instanceof Error) throw next;
      return next;
    };
    await waitUntilReleased({ pod: 'w-1', read, parse, intervalMs: 1, onError: (e) => errors.push(e) });
    expect(answers).toEqual([]);
    expect(errors).toHaveLength(1);
  });

  it('stops waiting once the pod no longer leaves (its StatefulSet grew back over it), without reading the config again', async () => {
    let reads = 0;
    const leaving = [true, true, false];
    const read = async () => (reads++, holding);
    await waitUntilReleased({ pod: 'w-1', read, parse, intervalMs: 1, stillLeaving: async () => leaving.shift()! });
    expect(reads).toBe(2);
  });

  it('stops waiting once the pod may no longer read the config (its Role or ServiceAccount gone with the namespace)', async () => {
    let reads = 0;
    const read = async () => {
      reads += 1;
      if (reads > 1) throw Object.assign(new Error('forbidden'), { code: 403 });
      return holding;
    };
    await waitUntilReleased({ pod: 'w-1', read, parse, intervalMs: 1 });
    expect(reads).toBe(2);
  });
});
