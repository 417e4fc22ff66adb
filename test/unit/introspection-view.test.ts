import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { renderHtml, swarmView } from '../../lib/introspection/view.js';

type SwarmViewInput = Parameters<typeof swarmView>[0];
type OwnersBefore = Record<string, readonly string[]>;
import { diff } from '../../lib/plan/index.js';

const swarm = { metadata: { namespace: 'demo', name: 'web' }, status: { phase: 'Updating' as const, version: 6 } };

const input: SwarmViewInput = {
  swarm,
  config: {
    version: 7,
    workloads: {
      'web-10': { jobs: ['j3'], version: 7 },
      'web-2': { jobs: ['j10', 'j2'], version: 7 },
      'web-0': { jobs: ['j1'], version: 5 },
    },
  },
  pendingRestarts: ['web-2', 'web-10'],
  lastChange: { version: 7, before: { 'web-0': ['j1', 'j3'], 'web-2': ['j2', 'gone'] } },
};

describe('swarmView', () => {
  it('lists workers by ordinal with their jobs (in code-unit order, as config.yml holds them), versions and pending restarts', () => {
    expect(swarmView(input)).toEqual({
      namespace: 'demo',
      name: 'web',
      version: 7,
      phase: 'Updating',
      workers: [
        { name: 'web-0', version: 5, jobs: ['j1'], restartPending: false },
        { name: 'web-2', version: 7, jobs: ['j10', 'j2'], restartPending: true },
        { name: 'web-10', version: 7, jobs: ['j3'], restartPending: true },
      ],
      pendingRestarts: ['web-2', 'web-10'],
      lastChange: {
        version: 7,
        moves: [
          { job: 'gone', from: 'web-2', to: null },
          { job: 'j10', from: null, to: 'web-2' },
          { job: 'j3', from: 'web-0', to: 'web-10' },
        ],
      },
    });
  });

  it('takes recorded moves as they are, sorted by job', () => {
    const moves = [
      { job: 'j3', from: 'web-0', to: 'web-10' },
      { job: 'gone', from: 'web-2', to: null },
    ];
    expect(swarmView({ ...input, lastChange: { version: 7, moves } }).lastChange).toEqual({ version: 7, moves: [moves[1], moves[0]] });
  });

  it('shows a Swarm with no assignment yet', () => {
    expect(swarmView({ swarm: { metadata: { namespace: 'demo', name: 'new' } }, pendingRestarts: [] })).toEqual({
      namespace: 'demo',
      name: 'new',
      version: 0,
      phase: 'Pending',
      workers: [],
      pendingRestarts: [],
    });
  });
});

// The page's moves are the plan's own (lib/plan/diff.ts): one Move, one way of computing it.
describe('moves between two assignments (diff)', () => {
  // Assignments: each job owned by at most one worker.
  const assignment = fc
    .uniqueArray(fc.constantFrom(...Array.from({ length: 12 }, (_, i) => `job-${i}`)), { maxLength: 12 })
    .chain((jobs) => fc.tuple(fc.constant(jobs), fc.array(fc.integer({ min: 0, max: 3 }), { minLength: jobs.length, maxLength: jobs.length })))
    .map(([jobs, owners]) => {
      const result: Record<string, string[]> = {};
      jobs.forEach((job, i) => (result[`w-${owners[i]}`] ??= []).push(job));
      return result as OwnersBefore;
    });
  const ownerOf = (owners: OwnersBefore) => new Map(Object.entries(owners).flatMap(([worker, jobs]) => jobs.map((job) => [job, worker] as const)));

  it('applying the moves to the old owners gives the new owners', () => {
    fc.assert(
      fc.property(assignment, assignment, (before, after) => {
        const owners = ownerOf(before);
        for (const move of diff(before, after).moves) {
          expect(owners.get(move.job) ?? null).toBe(move.from);
          if (move.to === null) owners.delete(move.job);
          else owners.set(move.job, move.to);
        }
        expect(owners).toEqual(ownerOf(after));
      }),
    );
  });

  it('is empty when nothing changed', () => {
    fc.assert(fc.property(assignment, (owners) => diff(owners, owners).moves.length === 0));
  });
});

describe('renderHtml', () => {
  it('escapes every value', () => {
    const hostile = swarmView({
      swarm,
      config: { version: 1, workloads: { 'web-0': { jobs: ['<script>alert(1)</script>', 'a"b&c'], version: 1 } } },
      pendingRestarts: [],
      lastChange: { version: 1, before: {} },
    });
    const html = renderHtml(hostile);
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;alert(1)&lt;/script&gt;');
    expect(html).toContain('a&quot;b&amp;c');
  });

  it('is self-contained', () => {
    const html = renderHtml(swarmView(input));
    expect(html).not.toMatch(/<(script|link|img)\b/i);
    expect(html).not.toMatch(/\b(src|href)=/i);
  });

  it('highlights jobs that moved in', () => {
    const html = renderHtml(swarmView(input));
    expect(html).toContain('<li class="moved" data-job="j3"');
    expect(html).toContain('<li data-job="j1">');
  });

  it('escapes the five HTML specials', () => {
    const job = `<a href="x">'&'</a>`;
    const html = renderHtml(swarmView({ swarm, config: { version: 1, workloads: { 'web-0': { jobs: [job], version: 1 } } }, pendingRestarts: [] }));
    expect(html).toContain('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
    expect(html).not.toContain(job);
  });
});
