// A config is never decided from an older spec than the one it was written from
// (lib/decisions/spec-generation.ts): a reconcile that read the Swarm before
// another instance wrote the config from a newer spec re-reads instead of taking
// the jobs just added away again (the simulator's corpus: stale-spec-removes-new-jobs).
import { describe, expect, it } from 'vitest';
import type { ValidSwarm } from '../../lib/api/types.js';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { SPEC_GENERATION_ANNOTATION, specReadIsOlder } from '../../lib/decisions/spec-generation.js';
import { swarmOf } from '../support/fixtures.js';
import { configOf, converge, sts, validSwarm, workerPod, written } from '../support/views.js';

const at = (generation: number, jobs: string[], uid = 'swarm-uid'): ValidSwarm => {
  const s = validSwarm(swarmOf({ jobs }));
  return { ...s, metadata: { ...s.metadata, uid, generation } };
};
const pods = [workerPod(0), workerPod(1)];

describe('the spec a config was decided from', () => {
  it('is recorded with the write; a later reconcile that read an older generation is told to re-read, not to write', () => {
    const first = written(decideConfigMap({ swarm: at(1, ['a', 'b']), statefulSet: sts(2), configMap: undefined, pods }));
    expect(first.annotations[SPEC_GENERATION_ANNOTATION]).toBe('swarm-uid/1');
    // Generation 2 adds c (another instance read it first and wrote).
    const second = written(decideConfigMap({ swarm: at(2, ['a', 'b', 'c']), statefulSet: sts(2), configMap: first, pods }));
    expect(second.annotations[SPEC_GENERATION_ANNOTATION]).toBe('swarm-uid/2');
    expect(Object.values(configOf(second).workloads).flatMap((w) => w.jobs).sort()).toEqual(['a', 'b', 'c']);
    // A reconcile that read generation 1 before that write, and the ConfigMap after it.
    const stale = decideConfigMap({ swarm: at(1, ['a', 'b']), statefulSet: sts(2), configMap: second, pods });
    expect(stale.kind).toBe('stale');
    // The same generation, or a newer one, decides as before.
    expect(converge(decideConfigMap({ swarm: at(2, ['a', 'b', 'c']), statefulSet: sts(2), configMap: second, pods })).write).toBe('none');
    expect(converge(decideConfigMap({ swarm: at(3, ['a', 'b']), statefulSet: sts(2), configMap: second, pods })).write).toBe('update');
  });

  it('alone is no reason to write, and says nothing about another Swarm of that name (recreated: a new uid)', () => {
    const cm = written(decideConfigMap({ swarm: at(4, ['a', 'b']), statefulSet: sts(2), configMap: undefined, pods }));
    // A spec change that changes nothing in the config (say maxUnavailable) writes nothing.
    expect(converge(decideConfigMap({ swarm: at(5, ['a', 'b']), statefulSet: sts(2), configMap: cm, pods })).write).toBe('none');
    expect(specReadIsOlder(cm.annotations, at(1, ['a'], 'another-uid'))).toBe(false);
    expect(specReadIsOlder({ [SPEC_GENERATION_ANNOTATION]: 'garbled' }, at(1, ['a']))).toBe(false);
    expect(specReadIsOlder(cm.annotations, at(3, ['a']))).toBe(true);
  });
});
