// The reference worker on SIGTERM: whether it keeps its jobs until they are
// handed over (it leaves its StatefulSet, or is replaced under its own name
// while Swarm says it hands them over) or stops at once.
import { describe, expect, it } from 'vitest';
import { departureOf, waitsOn, waitUntilReleased, type ConfigMapRead, type Departure } from '../../sdk/typescript/src/drain.js';
import { parse } from '../../lib/workerconfig/index.js';

describe('departureOf', () => {
  it('a pod past the replicas leaves (kubectl scale sts down); one within them is replaced under its name (a rolling update, a deletion)', () => {
    expect(departureOf('w', 'w-3', { start: 0, replicas: 1 })).toBe('leaving');
    expect(departureOf('w', 'w-1', { start: 0, replicas: 1 })).toBe('leaving');
    expect(departureOf('w', 'w-0', { start: 0, replicas: 1 })).toBe('replaced');
    expect(departureOf('w', 'w-2', { start: 0, replicas: 3 })).toBe('replaced');
  });

  it('counts from spec.ordinals.start; with the StatefulSet gone nobody takes over', () => {
    expect(departureOf('w', 'w-5', { start: 5, replicas: 2 })).toBe('replaced');
    expect(departureOf('w', 'w-7', { start: 5, replicas: 2 })).toBe('leaving');
    expect(departureOf('w', 'w-4', { start: 5, replicas: 2 })).toBe('leaving');
    expect(departureOf('w', 'w-0', undefined)).toBe('ended');
  });
});

const holding = 'version: 2\nworkloads:\n  w-1:\n    jobs: [j1]\n    version: 1\n';
const released = 'version: 3\nworkloads:\n  w-0:\n    jobs: [j1]\n    version: 3\n';
const cm = (text: string | undefined, handover = true): ConfigMapRead => ({ text, handover });

describe('waitsOn', () => {
  it('a leaving pod waits while it has jobs; a replaced one only while Swarm hands them over; an ended pool never', () => {
    expect(waitsOn(cm(holding, false), 'leaving', 'w-1', parse)).toBe(true);
    expect(waitsOn(cm(holding, true), 'replaced', 'w-1', parse)).toBe(true);
    expect(waitsOn(cm(holding, false), 'replaced', 'w-1', parse)).toBe(false);
    expect(waitsOn(cm(holding, true), 'ended', 'w-1', parse)).toBe(false);
    expect(waitsOn(cm(released, true), 'replaced', 'w-1', parse)).toBe(false);
    // The ConfigMap (so the Swarm) gone: nothing to wait for.
    expect(waitsOn(undefined, 'leaving', 'w-1', parse)).toBe(false);
  });
});

describe('waitUntilReleased', () => {
  it('waits through failed reads while the config gives the pod jobs, and returns once it gives none', async () => {
    const answers: Array<ConfigMapRead | Error> = [cm(holding), Object.assign(new Error('timeout'), { code: 503 }), cm(holding), cm(released)];
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

  it('a replaced pod waits while the handover is announced, and stops once it is withdrawn (no serving peer)', async () => {
    const answers = [cm(holding), cm(holding), cm(holding, false)];
    const read = async () => answers.shift()!;
    await waitUntilReleased({ pod: 'w-1', read, parse, intervalMs: 1, departure: async () => 'replaced' });
    expect(answers).toEqual([]);
  });

  it('stops waiting once its StatefulSet is gone, without reading the config again', async () => {
    let reads = 0;
    const departures: Departure[] = ['leaving', 'leaving', 'ended'];
    const read = async () => (reads++, cm(holding, false));
    await waitUntilReleased({ pod: 'w-1', read, parse, intervalMs: 1, departure: async () => departures.shift()! });
    expect(reads).toBe(2);
  });

  it('stops waiting once the pod may no longer read the config (its Role or ServiceAccount gone with the namespace)', async () => {
    let reads = 0;
    const read = async () => {
      reads += 1;
      if (reads > 1) throw Object.assign(new Error('forbidden'), { code: 403 });
      return cm(holding);
    };
    await waitUntilReleased({ pod: 'w-1', read, parse, intervalMs: 1 });
    expect(reads).toBe(2);
  });
});
