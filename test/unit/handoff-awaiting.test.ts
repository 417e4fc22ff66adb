// Break-before-make: a job awaiting its gainer keeps waiting when the assignment gives it to
// another worker (the gainer left the pool, or was renumbered away), until every other worker
// has caught up — its earlier holder may still run it (lib/decisions/handoff.ts; the simulator's
// corpus: bbm-awaiting-job-moves-to-another-gainer). Pure.
import { describe, expect, it } from 'vitest';
import { stageHandoff } from '../../lib/decisions/handoff.js';
import type { WorkerFacts } from '../../lib/decisions/restarts.js';
import type { WorkerConfig } from '../../lib/workerconfig/index.js';
import { workerPod } from '../support/views.js';

// Version 9: workers-4 gave job-5 up (its restart to load that is still due), and job-5 awaits workers-6.
const v9: WorkerConfig = {
  version: 9,
  workloads: {
    'swarm-worker-3': { jobs: ['job-6'], version: 9 },
    'swarm-worker-4': { jobs: ['job-3'], version: 9 },
    'swarm-worker-6': { jobs: [], version: 9, awaiting: ['job-5'] },
  },
};
// Now workers-6 is gone and job-5 belongs to workers-2, a new pod.
const target = { 'swarm-worker-2': ['job-5'], 'swarm-worker-3': ['job-6'], 'swarm-worker-4': ['job-3'] };
const facts =
  (behind: readonly string[]) =>
  (worker: string): WorkerFacts => {
    if (worker === 'swarm-worker-6') return {};
    const pod = workerPod(Number(worker.slice(-1)));
    return behind.includes(worker) ? { pod, restartPending: true } : { pod, ack: 'runs' };
  };

describe('break-before-make: a job awaiting one gainer, given to another', () => {
  it('still awaits while a worker that may run it has not caught up', () => {
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v9, target, facts: facts(['swarm-worker-4']) });
    expect(staged.jobs['swarm-worker-2']).toEqual([]);
    expect(staged.marks['swarm-worker-2']).toEqual({ awaiting: ['job-5'] });
  });

  it('is published once every other worker has caught up', () => {
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v9, target, facts: facts([]) });
    expect(staged.jobs['swarm-worker-2']).toEqual(['job-5']);
    expect(staged.marks['swarm-worker-2']).toBeUndefined();
  });
});

// The simulator's seed 575 (before the handoff became immutable; still the rule for a job published to two): a make-before-break hand-off in flight (the job
// published to its gainer and, releasing, to its loser) when the Swarm switches to break-before-make.
describe('break-before-make after a switch: a job published to two workers', () => {
  const v4: WorkerConfig = {
    version: 4,
    workloads: {
      'swarm-worker-1': { jobs: ['job-1', 'job-3'], version: 4, releasing: ['job-3'] },
      'swarm-worker-2': { jobs: ['job-3'], version: 4 },
    },
  };
  const target = { 'swarm-worker-1': ['job-1'], 'swarm-worker-2': ['job-3'] };
  const runs = (worker: string): WorkerFacts => ({ pod: workerPod(Number(worker.slice(-1))), ack: 'runs' });

  it('awaits on its gainer until the loser has stopped it: never two owners from the switch on', () => {
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v4, target, facts: runs });
    expect(staged.jobs['swarm-worker-1']).toEqual(['job-1']);
    expect(staged.jobs['swarm-worker-2']).toEqual([]);
    expect(staged.marks['swarm-worker-2']).toEqual({ awaiting: ['job-3'] });
  });
});


// The simulator's seeds 2 and 43 at 2ad19ff and 911 at 9cf9ca0 (corpus: bbm-dropped-job-put-back-restart-only,
// -hot-reload, bbm-put-back-after-config-lost): a job removed from the spec and put back under its own name
// before its worker reloaded its share without it (or after the config was lost).
describe('break-before-make: a job new to the config', () => {
  // Version 4: job-3 was dropped from workers-1's share, which has not reloaded it yet.
  const v4: WorkerConfig = {
    version: 4,
    workloads: { 'swarm-worker-0': { jobs: ['job-1'], version: 1 }, 'swarm-worker-1': { jobs: ['job-2'], version: 4 }, 'swarm-worker-2': { jobs: ['job-4'], version: 1 } },
  };
  const behindOn = (behind: readonly string[]) => (worker: string): WorkerFacts => {
    if (worker === 'swarm-worker-2') return {};
    const pod = workerPod(Number(worker.slice(-1)));
    return behind.includes(worker) ? { pod, ack: 'differs' } : { pod, ack: 'runs' };
  };
  const back = { 'swarm-worker-0': ['job-1', 'job-3'], 'swarm-worker-1': ['job-2', 'job-4'] };

  it('awaits its gainer while another worker has not caught up: that one may still run it', () => {
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v4, target: back, facts: behindOn(['swarm-worker-1']) });
    expect(staged.jobs['swarm-worker-0']).toEqual(['job-1']);
    expect(staged.marks['swarm-worker-0']).toEqual({ awaiting: ['job-3'] });
    // A job published to a worker with no pod runs nowhere: it moves at once.
    expect(staged.jobs['swarm-worker-1']).toEqual(['job-2', 'job-4']);
  });

  it('is published once every other worker has caught up', () => {
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v4, target: back, facts: behindOn([]) });
    expect(staged.jobs['swarm-worker-0']).toEqual(['job-1', 'job-3']);
    expect(staged.marks).toEqual({});
  });

  it('goes to a worker that is itself the only one behind at once: nobody else may run it', () => {
    const staged = stageHandoff({ handoff: 'BreakBeforeMake', previous: v4, target: { 'swarm-worker-0': ['job-1'], 'swarm-worker-1': ['job-2', 'job-3'] }, facts: behindOn(['swarm-worker-1']) });
    expect(staged.jobs['swarm-worker-1']).toEqual(['job-2', 'job-3']);
    expect(staged.marks).toEqual({});
  });
});
