import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { clockOffset, coverageOf, lastChangeIn, ownersAt, ownershipsOf, type ObservedReport, type SourceEnd } from '../support/coverage-recorder/core.js';

const s = (seconds: number) => seconds * 1000;
const started = (source: string, job: string, at: number): ObservedReport => ({ source, event: 'job.started', job, time: s(at) });
const stopped = (source: string, job: string, at: number): ObservedReport => ({ source, event: 'job.stopped', job, time: s(at) });
const boot = (source: string, at: number): ObservedReport => ({ source, event: 'worker.started', time: s(at) });
const exit = (source: string, at: number): ObservedReport => ({ source, event: 'worker.stopped', time: s(at) });
const window = (from: number, to: number) => ({ from: s(from), to: s(to) });

const coverage = (reports: ObservedReport[], jobs: string[], w = window(0, 20), ends: SourceEnd[] = [], clockOffsets = {}) =>
  coverageOf(ownershipsOf(reports, ends, { clockOffsets }), jobs, w);

describe('coverage from job reports', () => {
  it('one owner for the whole window: nothing uncovered, nothing duplicated', () => {
    const report = coverage([boot('a', 0), started('a', 'j', 0)], ['j']);
    expect(report.jobs).toEqual([{ job: 'j', uncoveredSeconds: 0, duplicateSeconds: 0, gaps: [], duplicates: [], ownersAtEnd: ['a'] }]);
    expect(report.totals).toEqual({ uncoveredSeconds: 0, duplicateSeconds: 0, jobsUncovered: 0, jobsDuplicated: 0 });
  });

  it('make before break: the overlap is duplicate time', () => {
    const report = coverage([started('a', 'j', 0), stopped('a', 'j', 10), started('b', 'j', 7)], ['j']);
    expect(report.jobs[0]).toMatchObject({ uncoveredSeconds: 0, duplicateSeconds: 3, duplicates: [window(7, 10)], ownersAtEnd: ['b'] });
  });

  it('break before make: the hole is uncovered time, listed as a gap', () => {
    const report = coverage([started('a', 'j', 0), stopped('a', 'j', 5), started('b', 'j', 8)], ['j']);
    expect(report.jobs[0]).toMatchObject({ uncoveredSeconds: 3, duplicateSeconds: 0, gaps: [window(5, 8)] });
    expect(report.gaps).toEqual([{ job: 'j', ...window(5, 8) }]);
  });

  it('a stop and a start at the same instant leave neither gap nor duplicate', () => {
    const report = coverage([started('a', 'j', 0), stopped('a', 'j', 5), started('b', 'j', 5)], ['j']);
    expect(report.totals).toMatchObject({ uncoveredSeconds: 0, duplicateSeconds: 0 });
  });

  it('three owners at once count once as duplicate time, not twice', () => {
    const report = coverage([started('a', 'j', 0), started('b', 'j', 2), started('c', 'j', 4), stopped('c', 'j', 6), stopped('b', 'j', 8)], ['j']);
    expect(report.jobs[0]).toMatchObject({ duplicateSeconds: 6, duplicates: [window(2, 8)] });
  });

  it('a job never started is uncovered for the whole window', () => {
    const report = coverage([started('a', 'j', 0)], ['j', 'never']);
    expect(report.jobs.find((j) => j.job === 'never')).toMatchObject({ uncoveredSeconds: 20, gaps: [window(0, 20)], ownersAtEnd: [] });
    expect(report.totals).toMatchObject({ uncoveredSeconds: 20, jobsUncovered: 1 });
  });

  it('clips to the window: runs before and after it do not count', () => {
    const report = coverage([started('a', 'j', 0), stopped('a', 'j', 12), started('b', 'j', 15)], ['j'], window(10, 14));
    expect(report.jobs[0]).toMatchObject({ uncoveredSeconds: 2, gaps: [window(12, 14)], ownersAtEnd: [] });
  });

  it('a removed job still running is reported as unexpected', () => {
    const report = coverage([started('a', 'j', 0), started('a', 'old', 0), stopped('a', 'old', 3)], ['j'], window(1, 5));
    expect(report.unexpectedJobs).toEqual(['old']);
    expect(coverage([started('a', 'old', 0), stopped('a', 'old', 3)], [], window(4, 5)).unexpectedJobs).toEqual([]);
  });

  it('totals add up over jobs and gaps are listed in time order', () => {
    const report = coverage(
      [started('a', 'x', 0), stopped('a', 'x', 10), started('b', 'x', 12), started('a', 'y', 3), started('b', 'y', 4), stopped('a', 'y', 6)],
      ['x', 'y'],
    );
    expect(report.totals).toEqual({ uncoveredSeconds: 5, duplicateSeconds: 2, jobsUncovered: 2, jobsDuplicated: 1 });
    expect(report.gaps.map((g) => [g.job, g.from / 1000, g.to / 1000])).toEqual([
      ['y', 0, 3],
      ['x', 10, 12],
    ]);
  });
});

describe('pods that end without stop lines', () => {
  const reports = [boot('a', 0), started('a', 'j', 0), started('b', 'j', 9)];

  it('end at the container terminated time the kubelet reported', () => {
    const report = coverage(reports, ['j'], window(0, 20), [{ source: 'a', at: s(6), how: 'terminated' }]);
    expect(report.jobs[0]).toMatchObject({ uncoveredSeconds: 3, gaps: [window(6, 9)] });
  });

  it('else at the time the pod was seen deleted', () => {
    const report = coverage(reports, ['j'], window(0, 20), [{ source: 'a', at: s(7), how: 'deleted' }]);
    expect(report.jobs[0]).toMatchObject({ uncoveredSeconds: 2, gaps: [window(7, 9)] });
  });

  it('the terminated time wins over the deletion, whichever was seen first', () => {
    const ends: SourceEnd[] = [
      { source: 'a', at: s(8), how: 'deleted' },
      { source: 'a', at: s(6), how: 'terminated' },
    ];
    expect(coverage(reports, ['j'], window(0, 20), ends).jobs[0]?.gaps).toEqual([window(6, 9)]);
    expect(coverage(reports, ['j'], window(0, 20), [...ends].reverse()).jobs[0]?.gaps).toEqual([window(6, 9)]);
  });

  it('a source with stop lines keeps them: its end only closes what is still open', () => {
    const owned = ownershipsOf([started('a', 'j', 0), stopped('a', 'j', 4), started('a', 'k', 0)], [{ source: 'a', at: s(6), how: 'terminated' }]);
    expect(owned.ownerships.map((o) => [o.job, o.to / 1000, o.endedBy])).toEqual([
      ['j', 4, 'stopped'],
      ['k', 6, 'terminated'],
    ]);
  });

  it('a source without an end still runs its jobs', () => {
    const owned = ownershipsOf([started('a', 'j', 0)]);
    expect(owned.ownerships).toEqual([{ job: 'j', source: 'a', from: 0, to: Infinity, endedBy: 'running' }]);
  });

  it('worker.stopped closes anything left open (graceful exit)', () => {
    const owned = ownershipsOf([started('a', 'j', 0), exit('a', 5)], [{ source: 'a', at: s(9), how: 'deleted' }]);
    expect(owned.ownerships).toEqual([{ job: 'j', source: 'a', from: 0, to: s(5), endedBy: 'worker.stopped' }]);
  });

  it('a new process in the same pod (container restart) ends the old runs at its start, as an anomaly', () => {
    const owned = ownershipsOf([boot('a', 0), started('a', 'j', 1), boot('a', 5), started('a', 'j', 6)]);
    expect(owned.ownerships.map((o) => [o.from / 1000, o.to / 1000, o.endedBy])).toEqual([
      [1, 5, 'restarted'],
      [6, Infinity, 'running'],
    ]);
    expect(owned.anomalies).toHaveLength(1);
  });

  it('a container crashed and restarted in place: its runs end at the crash the kubelet reported, or at its last line if later; the gap is uncovered', () => {
    const reports = [boot('a', 0), started('a', 'j', 1), started('a', 'k', 3.5), boot('a', 13), started('a', 'j', 14), started('a', 'k', 14)];
    // The kubelet's terminated times are whole seconds: 3 for a death after the 3.5 s line.
    const owned = ownershipsOf(reports, [], { crashes: [{ source: 'a', at: s(3) }] });
    expect(owned.ownerships.map((o) => [o.job, o.from / 1000, o.to / 1000, o.endedBy])).toEqual([
      ['j', 1, 3.5, 'crashed'],
      ['k', 3.5, 3.5, 'crashed'],
      ['j', 14, Infinity, 'running'],
      ['k', 14, Infinity, 'running'],
    ]);
    expect(owned.anomalies).toEqual([]);
    // Backing off (not started again yet): the jobs ended at the crash all the same.
    const backingOff = ownershipsOf(reports.slice(0, 3), [], { crashes: [{ source: 'a', at: s(4) }] });
    expect(backingOff.ownerships.map((o) => [o.job, o.to / 1000, o.endedBy])).toEqual([
      ['j', 4, 'crashed'],
      ['k', 4, 'crashed'],
    ]);
    // A peer that took j over at 6 leaves it uncovered from the crash until then.
    const withPeer = coverageOf(ownershipsOf([...reports, started('b', 'j', 6)], [], { crashes: [{ source: 'a', at: s(4) }] }), ['j'], window(2, 20));
    expect(withPeer.jobs[0]!.gaps).toEqual([{ from: s(4), to: s(6) }]);
    // A crash before this process started is an earlier process's: the current one still runs.
    expect(ownershipsOf(reports, [], { crashes: [{ source: 'a', at: s(3) }] }).ownerships.filter((o) => o.endedBy === 'running')).toHaveLength(2);
  });

  it('a stop without a start, after the process\'s own start line, ran nothing (an anomaly)', () => {
    const owned = ownershipsOf([boot('a', 0), started('a', 'j', 1), exit('a', 4), stopped('a', 'j', 4)]);
    expect(owned.ownerships).toEqual([{ job: 'j', source: 'a', from: s(1), to: s(4), endedBy: 'worker.stopped' }]);
    expect(owned.anomalies).toHaveLength(1);
  });

  it('a stop without a start ran since before the window; a second start is ignored; both are anomalies', () => {
    const owned = ownershipsOf([stopped('a', 'j', 3), started('a', 'k', 1), started('a', 'k', 2), stopped('a', 'k', 4)]);
    expect(owned.ownerships.map((o) => [o.job, o.from / 1000, o.to / 1000])).toEqual([
      ['j', -Infinity, 3],
      ['k', 1, 4],
    ]);
    expect(owned.anomalies).toHaveLength(2);
    expect(coverageOf(owned, ['j'], window(0, 5)).jobs[0]?.gaps).toEqual([window(3, 5)]);
  });
});

describe('lastChangeIn', () => {
  it('is the last start or stop inside the window, or its start when nothing changed', () => {
    const owned = ownershipsOf([started('a', 'j', 0), stopped('a', 'j', 5), started('b', 'j', 7), started('b', 'k', 30)]);
    expect(lastChangeIn(owned, window(1, 20))).toBe(s(7));
    expect(lastChangeIn(owned, window(8, 20))).toBe(s(8));
    expect(lastChangeIn(owned, window(1, 7))).toBe(s(7));
  });
});

describe('clocks of different pods', () => {
  it('reports of several pods arriving interleaved and out of order give the same coverage', () => {
    const ordered = [started('a', 'j', 0), stopped('a', 'j', 5), started('b', 'j', 8), stopped('b', 'j', 12), started('c', 'j', 11)];
    const shuffled = [ordered[4]!, ordered[2]!, ordered[1]!, ordered[3]!, ordered[0]!];
    expect(coverage(shuffled, ['j'])).toEqual(coverage(ordered, ['j']));
  });

  it('a pod whose clock is behind is put back on the reference clock by its offset', () => {
    // b's clock is 4 s behind: it logged its start at "4" when the node's clock said 8.
    const reports = [started('a', 'j', 0), stopped('a', 'j', 5), started('b', 'j', 4)];
    expect(coverage(reports, ['j']).jobs[0]).toMatchObject({ duplicateSeconds: 1, uncoveredSeconds: 0 });
    const offset = clockOffset([{ time: s(4), loggedAt: s(8) + 3 }]);
    expect(offset).toBe(s(4) + 3);
    expect(coverage(reports, ['j'], window(0, 20), [], { b: offset }).jobs[0]).toMatchObject({ duplicateSeconds: 0, uncoveredSeconds: 3.003 });
  });

  it('treats a few ms between a line and its runtime stamp as latency, not skew', () => {
    expect(clockOffset([{ time: 1000, loggedAt: 1004 }, { time: 2000, loggedAt: 2001 }])).toBe(0);
    expect(clockOffset([])).toBe(0);
    expect(clockOffset([{ time: 10_000, loggedAt: 7_000 }])).toBe(-3000);
  });
});

describe('coverage agrees with counting owners second by second', () => {
  // Small integer timelines: each source runs each job over a few [start, stop) runs.
  const run = fc.tuple(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 1, max: 10 }));
  const source = fc.dictionary(fc.constantFrom('x', 'y', 'z'), fc.array(run, { maxLength: 3 }), { maxKeys: 3 });
  const timeline = fc.dictionary(fc.constantFrom('a', 'b', 'c', 'd'), source, { maxKeys: 4 });

  it('uncovered and duplicate seconds, owners at each instant', () => {
    fc.assert(
      fc.property(timeline, fc.integer({ min: 0, max: 15 }), fc.integer({ min: 1, max: 30 }), (sources, from, length) => {
        const reports: ObservedReport[] = [];
        const expectedRuns: Array<[string, string, number, number]> = [];
        for (const [src, jobs] of Object.entries(sources)) {
          // One source runs a job at most once at a time: lay the runs end to end.
          for (const [job, runs] of Object.entries(jobs)) {
            let t = 0;
            for (const [pause, length] of runs) {
              const start = t + pause;
              reports.push(started(src, job, start), stopped(src, job, start + length));
              expectedRuns.push([src, job, start, start + length]);
              t = start + length + 1;
            }
          }
        }
        const jobs = ['x', 'y', 'z'];
        const report = coverage(reports, jobs, window(from, from + length));
        const owned = ownershipsOf(reports);
        for (const job of jobs) {
          let uncovered = 0;
          let duplicate = 0;
          for (let t = from; t < from + length; t++) {
            const owners = expectedRuns.filter(([, j, a, b]) => j === job && a <= t && t < b).length;
            if (owners === 0) uncovered++;
            if (owners >= 2) duplicate++;
            expect(ownersAt(owned, s(t)).get(job)?.length ?? 0).toBe(owners);
          }
          const got = report.jobs.find((j) => j.job === job)!;
          expect([got.uncoveredSeconds, got.duplicateSeconds]).toEqual([uncovered, duplicate]);
          expect(got.gaps.reduce((sum, g) => sum + g.to - g.from, 0)).toBe(s(uncovered));
        }
      }),
    );
  });
});
