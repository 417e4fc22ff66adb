import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { diffShares, EMPTY_SHARE, shareOf, type WorkloadsView } from '../../sdk/typescript/src/share.js';
import { INITIAL_STATE, nextState, stopAll } from '../../sdk/typescript/src/state.js';
import { jobReports, lifecycleReport, transitionReports } from '../../examples/worker/report.js';

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
    expect(step.state).toEqual({ share: { jobs: ['stream:a', 'stream:b'], version: 4 }, configVersion: 4, loadedAt: now.toISOString(), stopping: false });
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

describe('stopAll', () => {
  const parse = (text: string): WorkloadsView => JSON.parse(text) as WorkloadsView;

  it('loses every running job, keeps the version, and ignores configs read afterwards', () => {
    const running = nextState(INITIAL_STATE, JSON.stringify(config), 'swarm-worker-0', parse, new Date(0)).state;
    const step = stopAll(running);
    expect(step.change).toEqual({ gained: [], lost: ['stream:a', 'stream:b'], kept: [] });
    expect(step.state.share).toEqual({ jobs: [], version: 4 });
    expect(step.state.stopping).toBe(true);
    const later = nextState(step.state, JSON.stringify(config), 'swarm-worker-0', parse, new Date(1));
    expect(later).toEqual({ kind: 'unchanged', state: step.state });
  });

  it('of a worker that never loaded a config: nothing to stop', () => {
    expect(stopAll(INITIAL_STATE).change.lost).toEqual([]);
  });
});

describe('job reports', () => {
  const parse = (text: string): WorkloadsView => JSON.parse(text) as WorkloadsView;
  const reporter = { pod: 'swarm-worker-0', uid: 'u-0' };

  it('stops before starts; a stop carries the version that ran, a start the new one', () => {
    const reports = jobReports({ gained: ['c'], lost: ['a'], kept: ['b'] }, { before: 3, after: 5, configVersion: 5 }, reporter);
    expect(reports).toEqual([
      { event: 'job.stopped', job: 'a', version: 3, configVersion: 5, pod: 'swarm-worker-0', uid: 'u-0' },
      { event: 'job.started', job: 'c', version: 5, configVersion: 5, pod: 'swarm-worker-0', uid: 'u-0' },
    ]);
  });

  it('leaves the uid out when the pod has none (a local process)', () => {
    expect(lifecycleReport('worker.started', { pod: 'p' })).toEqual({ event: 'worker.started', pod: 'p' });
    expect(jobReports({ gained: ['a'], lost: [], kept: [] }, { before: -1, after: 1, configVersion: 1 }, { pod: 'p', uid: undefined })[0]).not.toHaveProperty('uid');
  });

  it('follow a worker through first load, a move, an unchanged reload and its stop', () => {
    const steps = [
      JSON.stringify(config),
      JSON.stringify({ version: 5, workloads: { ...config.workloads, 'swarm-worker-0': { jobs: ['stream:b', 'stream:d'], version: 5 } } }),
      JSON.stringify({ version: 6, workloads: { ...config.workloads, 'swarm-worker-0': { jobs: ['stream:b', 'stream:d'], version: 5 } } }),
    ];
    let state = INITIAL_STATE;
    const lines: string[] = [];
    const record = (step: ReturnType<typeof stopAll> | ReturnType<typeof nextState>) => {
      for (const r of transitionReports(state, step, reporter)) lines.push(`${r.event} ${r.job}@${r.version}`);
      state = step.state;
    };
    for (const text of steps) record(nextState(state, text, 'swarm-worker-0', parse, new Date(0)));
    record(stopAll(state));
    expect(lines).toEqual([
      'job.started stream:a@4',
      'job.started stream:b@4',
      'job.stopped stream:a@4',
      'job.started stream:d@5',
      'job.stopped stream:b@5',
      'job.stopped stream:d@5',
    ]);
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
