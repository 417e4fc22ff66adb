import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIMITS, POOL_RULES, SPEC_RULES } from '../../lib/api/schema.js';
import { poolRuleProblem, validateSwarm } from '../../lib/api/validate.js';

/** No control characters: what the schema allows in a job name. */
const printable = (s: string): boolean => [...s].every((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f);

function swarm(spec: Record<string, unknown> = {}, top: Record<string, unknown> = {}) {
  return {
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name: 'demo', namespace: 'team-a' },
    spec: { statefulSetName: 'worker', configMapName: 'worker-config', workload: { jobs: ['a', 'b'] }, ...spec },
    ...top,
  };
}

function problemsOf(obj: unknown): string[] {
  const result = validateSwarm(obj);
  if (result.ok) throw new Error('expected the Swarm to be invalid');
  return result.problems;
}

describe('validateSwarm accepts', () => {
  it('a minimal Swarm, with every default applied', () => {
    const result = validateSwarm(swarm());
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.swarm.spec.configKey).toBe('config.yml');
    expect(result.swarm.spec.restart).toEqual({ policy: 'None', handoff: 'MakeBeforeBreak', maxUnavailable: 1, progressDeadlineSeconds: 600 });
  });

  it('explicit settings as given, and both job forms', () => {
    const jobs = ['a', { name: 'b', weight: 1000, dedicated: true }, { name: 'c' }];
    const result = validateSwarm(swarm({ configKey: 'jobs.yaml', workload: { jobs }, restart: { policy: 'None', handoff: 'BreakBeforeMake', maxUnavailable: 3 } }));
    expect(result).toMatchObject({
      ok: true,
      swarm: { spec: { configKey: 'jobs.yaml', workload: { jobs }, restart: { policy: 'None', handoff: 'BreakBeforeMake', maxUnavailable: 3 } } },
    });
  });

  it('a Swarm with status, and an empty job list', () => {
    const status = {
      phase: 'Running',
      replicas: 2,
      conditions: [{ type: 'Ready', status: 'True', reason: 'Assigned', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
      workers: [{ name: 'worker-0', jobs: 1, version: 3, restartPending: false }],
    };
    expect(validateSwarm(swarm({ workload: { jobs: [] } }, { status })).ok).toBe(true);
  });

  it('the limits themselves', () => {
    const jobs = Array.from({ length: LIMITS.maxJobs }, (_, i) => (i === 0 ? 'x'.repeat(LIMITS.jobNameMaxLength) : `job-${i}`));
    expect(validateSwarm(swarm({ workload: { jobs } })).ok).toBe(true);
  });

  it('without touching its input', () => {
    const input = swarm();
    const before = structuredClone(input);
    validateSwarm(input);
    expect(input).toEqual(before);
  });
});

describe('validateSwarm names every problem by its field path', () => {
  it.each([
    ['a weight above the limit', { workload: { jobs: ['a', 'b', 'c', { name: 'd', weight: 1001 }] } }, 'spec.workload.jobs[3].weight: must be ≤ 1000'],
    ['a weight below the limit', { workload: { jobs: [{ name: 'd', weight: 0 }] } }, 'spec.workload.jobs[0].weight: must be ≥ 1'],
    ['a fractional weight', { workload: { jobs: [{ name: 'd', weight: 1.5 }] } }, 'spec.workload.jobs[0].weight: must be integer, not number'],
    ['a job that is neither string nor object', { workload: { jobs: ['a', 7] } }, 'spec.workload.jobs[1]: must be string or object, not integer'],
    ['an empty job name', { workload: { jobs: [''] } }, 'spec.workload.jobs[0]: must not be empty'],
    ['a job name too long', { workload: { jobs: ['x'.repeat(LIMITS.jobNameMaxLength + 1)] } }, `spec.workload.jobs[0]: must be at most ${LIMITS.jobNameMaxLength} characters`],
    ['a control character in a job name', { workload: { jobs: [{ name: 'a\nb' }] } }, 'spec.workload.jobs[0].name: must not contain control characters'],
    ['an object job without a name', { workload: { jobs: [{ weight: 2 }] } }, 'spec.workload.jobs[0].name: is required'],
    ['a misspelled job field', { workload: { jobs: [{ name: 'a', wieght: 2 }] } }, 'spec.workload.jobs[0].wieght: is not a known field'],
    ['too many jobs', { workload: { jobs: Array.from({ length: LIMITS.maxJobs + 1 }, (_, i) => `j${i}`) } }, `spec.workload.jobs: must have at most ${LIMITS.maxJobs} items`],
    ['maxUnavailable 0', { restart: { maxUnavailable: 0 } }, 'spec.restart.maxUnavailable: must be ≥ 1'],
    ['an unknown restart policy', { restart: { policy: 'Always' } }, 'spec.restart.policy: must be one of Restart, None'],
    ['an unknown handoff', { restart: { handoff: 'Whenever' } }, 'spec.restart.handoff: must be one of MakeBeforeBreak, BreakBeforeMake'],
    ['a StatefulSet name that is not a DNS label', { statefulSetName: 'Worker_1' }, 'spec.statefulSetName: must be a DNS label'],
    ['a missing workload', { workload: undefined }, 'spec.workload: is required'],
    ['an unknown spec field', { workers: 3 }, 'spec.workers: is not a known field'],
    ['negative replicas', { replicas: -1 }, 'spec.replicas: must be ≥ 0'],
    ['more replicas than a Swarm manages', { replicas: LIMITS.maxWorkers + 1 }, `spec.replicas: must be ≤ ${LIMITS.maxWorkers}`],
  ])('%s', (_what, spec, expected) => {
    const problems = problemsOf(JSON.parse(JSON.stringify(swarm(spec))));
    expect(problems.some((p) => p.startsWith(expected))).toBe(true);
  });

  it('reports every problem at once, not the first only', () => {
    const problems = problemsOf(swarm({ statefulSetName: 'A', workload: { jobs: [{ name: 'a', weight: 2000 }, 3] } }));
    expect(problems).toEqual([
      expect.stringMatching(/^spec\.statefulSetName: must be a DNS label/),
      'spec.workload.jobs[0].weight: must be ≤ 1000',
      'spec.workload.jobs[1]: must be string or object, not integer',
    ]);
  });

  it('at most LIMITS.problemsListed problems, so the Condition message stays bounded', () => {
    const jobs = Array.from({ length: 5000 }, () => ({ name: 'x'.repeat(LIMITS.jobNameMaxLength), weight: 5000 }));
    const problems = problemsOf(swarm({ workload: { jobs } }));
    expect(problems).toHaveLength(LIMITS.problemsListed);
    expect(problems[0]).toBe('spec.workload.jobs[0].weight: must be ≤ 1000');
    expect(problems.at(-1)).toBe(`… and ${5000 - LIMITS.problemsListed + 1} more problems`);
    expect(problems.join('; ').length).toBeLessThan(32768);
  });

  it('duplicate job names, naming each and where it appears', () => {
    const problems = problemsOf(swarm({ workload: { jobs: ['a', 'b', { name: 'a', weight: 2 }, 'c', 'b', 'a'] } }));
    expect(problems).toEqual(['spec.workload.jobs: duplicate job names: "a" at [0], [2], [5]; "b" at [1], [4]']);
  });

  it('many duplicates, summarised', () => {
    const names = Array.from({ length: 12 }, (_, i) => `j${i}`);
    const [problem] = problemsOf(swarm({ workload: { jobs: [...names, ...names] } }));
    expect(problem).toMatch(/"j0" at \[0\], \[12\].*and 2 more$/);
  });

  it.each([
    ['not an object', 'swarm', '<root>: must be object, not string'],
    ['no spec', { apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', metadata: { name: 'x', namespace: 'y' } }, 'spec: is required'],
    ['no namespace', swarm({}, { metadata: { name: 'x' } }), 'metadata.namespace: is required'],
    ['another kind', swarm({}, { kind: 'Hive' }), 'kind: must be Swarm'],
    ['another API version', swarm({}, { apiVersion: 'k8slab.info/v2' }), 'apiVersion: must be k8slab.info/v1alpha1'],
  ])('an object that is %s', (_what, obj, expected) => {
    expect(problemsOf(obj)).toContain(expected);
  });
});

describe('restart policy Restart breaks first (restartBreaksFirst)', () => {
  const refused = `spec: ${SPEC_RULES.restartBreaksFirst.message}`;

  it.each([
    ['Restart with the default handoff', { policy: 'Restart' }],
    ['Restart with MakeBeforeBreak', { policy: 'Restart', handoff: 'MakeBeforeBreak' }],
  ])('refuses %s, saying why', (_what, restart) => {
    expect(problemsOf(swarm({ restart }))).toEqual([refused]);
    expect(refused).toMatch(/needs restart\.handoff BreakBeforeMake: a restarted worker stops every job it runs/);
  });

  it.each([
    ['None with MakeBeforeBreak', { policy: 'None', handoff: 'MakeBeforeBreak' }],
    ['None with BreakBeforeMake', { policy: 'None', handoff: 'BreakBeforeMake' }],
    ['Restart with BreakBeforeMake', { policy: 'Restart', handoff: 'BreakBeforeMake' }],
    ['the defaults (policy None)', {}],
  ])('accepts %s', (_what, restart) => {
    expect(validateSwarm(swarm({ restart })).ok).toBe(true);
  });
});

// The simulator: with restart-only workers, a fenced worker's restarts stayed pending for good (seeds 188, 195, 250, 280).
describe('failover needs hot-reloading workers (failoverHotReloads)', () => {
  const refused = `spec: ${SPEC_RULES.failoverHotReloads.message}`;
  it('refuses spec.failover with restart policy Restart, saying why; accepts it with None', () => {
    expect(problemsOf(swarm({ restart: { policy: 'Restart', handoff: 'BreakBeforeMake' }, failover: { leaseSeconds: 15 } }))).toEqual([refused]);
    expect(refused).toMatch(/needs restart\.policy None/);
    expect(validateSwarm(swarm({ restart: { policy: 'None' }, failover: { leaseSeconds: 15 } })).ok).toBe(true);
  });
});

describe('hot reload needs acknowledgement (POOL_RULES, judged against the pool)', () => {
  const specOf = (restart: Record<string, unknown>) => {
    const result = validateSwarm(swarm({ restart }));
    if (!result.ok) throw new Error(result.problems.join('; '));
    return result.swarm.spec;
  };
  const silent = { app: 'worker' };
  const declaring = { app: 'worker', 'k8slab.info/acknowledges': 'lease' };

  it('policy None over a template that does not declare it is refused, saying why and what to do', () => {
    expect(poolRuleProblem(specOf({}), silent)).toEqual({ reason: 'AcknowledgementRequired', message: POOL_RULES.hotReloadAcknowledges.message });
    expect(POOL_RULES.hotReloadAcknowledges.message).toMatch(/k8slab.info\/acknowledges: lease.*docs\/worker-protocol.md.*restart.policy Restart/);
  });

  it('a template that declares it, restart-only workers, or a pool not read (a view built by hand) pass', () => {
    expect(poolRuleProblem(specOf({ policy: 'None' }), declaring)).toBeUndefined();
    expect(poolRuleProblem(specOf({ policy: 'Restart', handoff: 'BreakBeforeMake' }), silent)).toBeUndefined();
    expect(poolRuleProblem(specOf({}), undefined)).toBeUndefined();
  });
});

describe('validateSwarm, over generated job lists', () => {
  const name = fc.string({ minLength: 1, maxLength: 40 }).filter(printable);

  it('accepts unique valid names and rejects exactly the lists with a duplicate, naming it', () => {
    fc.assert(
      fc.property(fc.uniqueArray(name, { maxLength: 50 }), fc.nat(), (names, pick) => {
        expect(validateSwarm(swarm({ workload: { jobs: names } })).ok).toBe(true);
        if (names.length === 0) return;
        const duplicate = names[pick % names.length]!;
        const problems = problemsOf(swarm({ workload: { jobs: [...names, { name: duplicate }] } }));
        expect(problems).toEqual([expect.stringContaining(JSON.stringify(duplicate))]);
      }),
    );
  });
});
