import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { assignmentOf, canonical, nextConfig, parse, render, WorkerConfigError } from '../../lib/workerconfig/index.js';

const seedStyle = `workloads:
  swarm-worker-0:
    jobs:
      - stream:xxrtve1
      - stream:xxrtve2
    version: 0
  swarm-worker-1:
    jobs:
      - stream:cars:new
      - "stream:cars:updated "
    version: 0
version: 0
`;

describe('render', () => {
  it('renders the seeds format, workers by ordinal, jobs sorted, every worker present', () => {
    const text = render(nextConfig(undefined, { 'w-10': [], 'w-2': ['b', 'a'], 'w-0': ['c'] }));
    expect(text).toBe(
      ['workloads:', '  w-0:', '    jobs:', '      - c', '    version: 1', '  w-2:', '    jobs:', '      - a', '      - b', '    version: 1', '  w-10:', '    jobs: []', '    version: 1', 'version: 1', ''].join('\n'),
    );
  });

  it('renders equal assignments byte-identically', () => {
    const a = render(nextConfig(undefined, { 'w-0': ['x', 'y'], 'w-1': ['z'] }));
    const b = render(nextConfig(undefined, { 'w-1': ['z'], 'w-0': ['y', 'x'] }));
    expect(a).toBe(b);
  });

  it('round-trips any config, awkward job names included', () => {
    const config = fc.record({
      version: fc.nat(),
      workloads: fc.dictionary(
        fc.string({ minLength: 1 }),
        fc.record({ jobs: fc.uniqueArray(fc.string({ minLength: 1 })), version: fc.nat() }),
      ),
    });
    fc.assert(
      fc.property(config, (c) => {
        const parsed = parse(render(c));
        expect(parsed.version).toBe(c.version);
        expect(Object.keys(parsed.workloads).sort()).toEqual(Object.keys(c.workloads).sort());
        for (const [w, share] of Object.entries(c.workloads)) {
          expect(parsed.workloads[w]!.version).toBe(share.version);
          expect([...parsed.workloads[w]!.jobs]).toEqual([...share.jobs].sort());
        }
        expect(render(parsed)).toBe(render(c));
      }),
      { numRuns: 200 },
    );
  });

  it('canonical(config) is what parse(render(config)) gives back, marks included, key order too (what the reconciler remembers after a write)', () => {
    const names = fc.uniqueArray(fc.string({ minLength: 1 }), { maxLength: 6 });
    const share = fc.record(
      { jobs: names, version: fc.nat(), releasing: names, awaiting: names, released: names },
      { requiredKeys: ['jobs', 'version'] },
    ).map((s) => {
      // What parse holds a share to: releasing within jobs, awaiting and released outside them.
      const within = (names: string[] | undefined, inJobs: boolean) => names?.filter((j) => s.jobs.includes(j) === inJobs);
      return { ...s, releasing: within(s.releasing, true), awaiting: within(s.awaiting, false), released: within(s.released, false) };
    });
    const config = fc.record({ version: fc.nat(), workloads: fc.dictionary(fc.stringMatching(/^w-([0-9]|1[0-2]|x)$/), share) });
    fc.assert(
      fc.property(config, (c) => {
        const parsed = parse(render(c));
        expect(canonical(c)).toStrictEqual(parsed);
        expect(Object.keys(canonical(c).workloads)).toEqual(Object.keys(parsed.workloads));
      }),
      { numRuns: 300 },
    );
  });
});

describe('parse', () => {
  it('reads the seeds format', () => {
    const config = parse(seedStyle);
    expect(config.version).toBe(0);
    expect(assignmentOf(config)).toEqual({
      'swarm-worker-0': ['stream:xxrtve1', 'stream:xxrtve2'],
      'swarm-worker-1': ['stream:cars:new', 'stream:cars:updated '],
    });
  });

  it.each([
    ['workloads:\n  w-0:\n    jobs: [a, 3]\n    version: 1\nversion: 2\n', 'config.yml:3:15: workloads.w-0.jobs[1]: expected a non-empty string'],
    ['workloads:\n  w-0:\n    jobs: []\nversion: 2\n', 'config.yml:3:5: workloads.w-0.version: missing'],
    ['workloads: {}\nversion: -1\n', 'config.yml:2:10: version: expected a non-negative integer'],
    ['workloads: {}\n', 'config.yml:1:1: version: missing'],
    ['workloads: {}\nversion: 1\nextra: 2\n', 'config.yml:3:1: extra: unknown field (expected "workloads" and "version")'],
    ['workloads:\n  w-0:\n    jobs: [a, a]\n    version: 1\nversion: 1\n', 'config.yml:3:15: workloads.w-0.jobs[1]: duplicate job "a"'],
    ['- a\n', 'config.yml:1:1: (document): expected a mapping with "workloads" and "version"'],
  ])('rejects %j naming line and field', (text, message) => {
    expect(() => parse(text)).toThrow(WorkerConfigError);
    expect(() => parse(text)).toThrow(new RegExp(`^${message.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  });

  it('reports YAML syntax errors with their line', () => {
    try {
      parse('workloads:\n  w-0:\n    jobs: [a\nversion: 2\n');
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(WorkerConfigError);
      expect((error as WorkerConfigError).message).toMatch(/^config\.yml:\d+:\d+: invalid YAML: /);
      expect((error as WorkerConfigError).line).toBeGreaterThanOrEqual(3);
    }
  });
});

describe('nextConfig', () => {
  it('starts at version 1', () => {
    expect(nextConfig(undefined, { 'w-0': ['a'], 'w-1': [] })).toEqual({
      version: 1,
      workloads: { 'w-0': { jobs: ['a'], version: 1 }, 'w-1': { jobs: [], version: 1 } },
    });
  });

  it('an unchanged share is the list as published; a share read with a job twice is not the same share', () => {
    const v1 = nextConfig(undefined, { 'w-0': ['a', 'b'], 'w-1': ['c', 'd'] });
    expect(nextConfig(v1, { 'w-0': ['b', 'a'], 'w-1': ['d', 'c'] })).toBe(v1);
    const edited = { version: 1, workloads: { 'w-0': { jobs: ['a', 'a'], version: 1 }, 'w-1': { jobs: ['c', 'd'], version: 1 } } };
    const v2 = nextConfig(edited, { 'w-0': ['b', 'a'], 'w-1': ['d', 'c'] });
    expect(v2.workloads['w-0']).toEqual({ jobs: ['a', 'b'], version: 2 });
    expect(v2.workloads['w-1']!.jobs).toBe(edited.workloads['w-1'].jobs);
  });

  it('bumps the top-level version on any change, and a worker version only when its share changed', () => {
    const v1 = nextConfig(undefined, { 'w-0': ['a', 'b'], 'w-1': ['c'] });
    const v2 = nextConfig(v1, { 'w-0': ['a'], 'w-1': ['c'], 'w-2': ['b'] });
    expect(v2).toEqual({
      version: 2,
      workloads: { 'w-0': { jobs: ['a'], version: 2 }, 'w-1': { jobs: ['c'], version: 1 }, 'w-2': { jobs: ['b'], version: 2 } },
    });
    const v3 = nextConfig(v2, { 'w-0': ['a'], 'w-1': ['c'] });
    expect(v3.version).toBe(3);
    expect(v3.workloads).toEqual({ 'w-0': { jobs: ['a'], version: 2 }, 'w-1': { jobs: ['c'], version: 1 } });
  });

  it('keeps the version when nothing changed (job order aside)', () => {
    const v1 = nextConfig(undefined, { 'w-0': ['a', 'b'] });
    expect(nextConfig(v1, { 'w-0': ['b', 'a'] })).toBe(v1);
  });
});

describe('worker names that are Object.prototype keys', () => {
  it('keeps a worker named __proto__ through render, parse and versioning', () => {
    const config = { version: 3, workloads: Object.fromEntries([['__proto__', { jobs: ['a'], version: 2 }], ['constructor', { jobs: [], version: 3 }]]) };
    const parsed = parse(render(config));
    expect(Object.keys(parsed.workloads).sort()).toEqual(['__proto__', 'constructor']);
    expect(parsed.workloads['__proto__']).toEqual({ jobs: ['a'], version: 2 });
    expect(Object.keys(assignmentOf(parsed)).sort()).toEqual(['__proto__', 'constructor']);
    expect(nextConfig(parsed, assignmentOf(parsed))).toBe(parsed);
  });
});
