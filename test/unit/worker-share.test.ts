import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { diffShares, EMPTY_SHARE, shareOf, type WorkloadsView } from '../../examples/worker/share.js';
import { INITIAL_STATE, nextState } from '../../examples/worker/state.js';

const config: WorkloadsView = {
  version: 4,
  workloads: {
    'swarm-worker-0': { jobs: ['stream:b', 'stream:a'], version: 4 },
    'swarm-worker-1': { jobs: ['stream:c'], version: 2 },
  },
};

describe('shareOf', () => {
  it('reads the entry of this pod, jobs sorted', () => {
    expect(shareOf(config, 'swarm-worker-0')).toEqual({ jobs: ['stream:a', 'stream:b'], version: 4 });
    expect(shareOf(config, 'swarm-worker-1')).toEqual({ jobs: ['stream:c'], version: 2 });
  });

  it('gives a pod missing from the config nothing', () => {
    expect(shareOf(config, 'swarm-worker-7')).toBe(EMPTY_SHARE);
  });
});

describe('diffShares', () => {
  it('names what was gained, lost and kept', () => {
    const change = diffShares({ jobs: ['a', 'b', 'c'], version: 1 }, { jobs: ['b', 'c', 'd'], version: 2 });
    expect(change).toEqual({ gained: ['d'], lost: ['a'], kept: ['b', 'c'] });
  });

  it('partitions: after = kept + gained, before = kept + lost, gained and lost disjoint', () => {
    const jobSet = fc.uniqueArray(fc.constantFrom('a', 'b', 'c', 'd', 'e', 'f', 'g'), { maxLength: 7 });
    fc.assert(
      fc.property(jobSet, jobSet, (before, after) => {
        const change = diffShares({ jobs: before, version: 0 }, { jobs: after, version: 1 });
        expect([...change.kept, ...change.gained].sort()).toEqual([...after].sort());
        expect([...change.kept, ...change.lost].sort()).toEqual([...before].sort());
        expect(change.gained.filter((job) => change.lost.includes(job))).toEqual([]);
      }),
    );
  });
});

describe('nextState', () => {
  const parse = (text: string): WorkloadsView => JSON.parse(text) as WorkloadsView;
  const now = new Date('2026-11-22T02:00:00Z');

  it('takes the first config as all gained', () => {
    const step = nextState(INITIAL_STATE, JSON.stringify(config), 'swarm-worker-0', parse, now);
    expect(step.kind).toBe('changed');
    if (step.kind !== 'changed') return;
    expect(step.change.gained).toEqual(['stream:a', 'stream:b']);
    expect(step.state).toEqual({ share: { jobs: ['stream:a', 'stream:b'], version: 4 }, configVersion: 4, loadedAt: now.toISOString() });
  });

  it('reports no change when another worker\'s share moved', () => {
    const first = nextState(INITIAL_STATE, JSON.stringify(config), 'swarm-worker-0', parse, now).state;
    const other = { ...config, version: 5, workloads: { ...config.workloads, 'swarm-worker-1': { jobs: ['stream:d'], version: 5 } } };
    const step = nextState(first, JSON.stringify(other), 'swarm-worker-0', parse, now);
    expect(step.kind).toBe('unchanged');
    expect(step.state.configVersion).toBe(5);
  });

  it('keeps the previous share when the config does not parse', () => {
    const first = nextState(INITIAL_STATE, JSON.stringify(config), 'swarm-worker-0', parse, now).state;
    const step = nextState(first, '{not json', 'swarm-worker-0', parse, now);
    expect(step.kind).toBe('rejected');
    expect(step.state).toBe(first);
  });

  it('drops everything when the config file disappears', () => {
    const first = nextState(INITIAL_STATE, JSON.stringify(config), 'swarm-worker-0', parse, now).state;
    const step = nextState(first, undefined, 'swarm-worker-0', parse, now);
    expect(step.kind).toBe('changed');
    if (step.kind !== 'changed') return;
    expect(step.change.lost).toEqual(['stream:a', 'stream:b']);
    expect(step.state.share).toBe(EMPTY_SHARE);
  });
});

describe('nextState with the real config.yml parser', () => {
  it('reads this pod\'s share from the YAML the assign function writes', async () => {
    const { parse } = await import('../../lib/workerconfig/index.js');
    const yaml = 'version: 2\nworkloads:\n  swarm-worker-0:\n    jobs: [stream:b, stream:a]\n    version: 2\n  swarm-worker-1:\n    jobs: [stream:c]\n    version: 1\n';
    const step = nextState(INITIAL_STATE, yaml, 'swarm-worker-1', parse, new Date(0));
    expect(step.state.share).toEqual({ jobs: ['stream:c'], version: 1 });
    expect(step.state.configVersion).toBe(2);
    expect(nextState(step.state, 'workloads: [', 'swarm-worker-1', parse, new Date(0)).kind).toBe('rejected');
  });
});
