// Two restart reconciles deciding from reads a few milliseconds apart (defect 5 of the simulation issue): one read
// before a worker acknowledged, the other after, so each found a different step due and each deleted a serving pod.
// The intent each records first (lib/decisions/restart-intents.ts) makes the later one count the other's pod.
import { describe, expect, it } from 'vitest';
import { INTENT_TTL_MS, liveIntents, mayStillDelete, readIntents, recordIntents, ANNOTATION_RESTARTING } from '../../lib/decisions/restart-intents.js';
import { decideRestarts } from '../../lib/decisions/restarts.js';
import type { ValidSwarm } from '../../lib/api/types.js';
import { workerPod } from '../support/views.js';

const now = new Date('2026-01-01T00:10:00Z');
const swarm = { spec: { restart: { policy: 'Restart', handoff: 'BreakBeforeMake', maxUnavailable: 1 }, replicas: 3 } } as unknown as ValidSwarm;
const statefulSet = { name: 'swarm-worker', replicas: 3, startOrdinal: 0 } as never;
const pods = [0, 1, 2].map((o) => workerPod(o));
// Worker 1 waits for worker 0 (its loser, restarted, serving, not yet acknowledged); worker 2 waits for nobody.
const workspace = {
  version: 2,
  steps: [
    { worker: 'swarm-worker-1', staleUid: pods[1]!.uid, waitFor: ['swarm-worker-0'] },
    { worker: 'swarm-worker-2', staleUid: pods[2]!.uid, waitFor: [] },
  ],
};

describe('restart intents', () => {
  it('a pod another reconcile recorded it is deleting counts as out of service: nothing else goes under maxUnavailable 1', () => {
    // The view after worker 0 acknowledged: worker 1 is due first. Without the other's intent on worker 2, it goes.
    const settled = decideRestarts({ swarm, statefulSet, workspace: { ...workspace, steps: [{ ...workspace.steps[0]!, waitFor: [] }, workspace.steps[1]!] }, pods });
    expect(settled.deletes.map((p) => p.name)).toEqual(['swarm-worker-1']);
    const racing = decideRestarts({ swarm, statefulSet, workspace: { ...workspace, steps: [{ ...workspace.steps[0]!, waitFor: [] }, workspace.steps[1]!] }, pods, inFlight: new Set([pods[2]!.uid]) });
    expect(racing.deletes).toEqual([]);
    expect(racing.waiting).toMatch(/maxUnavailable=1/);
  });

  it('an intent is in force only for its very pod, live and not yet terminating, within the TTL', () => {
    const at = new Date(now.getTime() - 1000).toISOString();
    const intents = readIntents({ [ANNOTATION_RESTARTING]: JSON.stringify([{ pod: 'swarm-worker-2', uid: pods[2]!.uid, at }, { pod: 'swarm-worker-1', uid: 'an-older-pod', at }]) });
    expect(liveIntents(intents, pods, now).map((i) => i.pod)).toEqual(['swarm-worker-2']);
    expect(liveIntents(intents, pods, new Date(now.getTime() + INTENT_TTL_MS))).toEqual([]);
    expect(liveIntents(intents, [pods[0]!, pods[1]!, { ...pods[2]!, terminating: true }], now)).toEqual([]);
    expect(readIntents({ [ANNOTATION_RESTARTING]: 'not json' })).toEqual([]);
  });

  it('records the new deletes beside the intents still in force; the writer acts only within half the TTL', () => {
    const kept = [{ pod: 'swarm-worker-2', uid: pods[2]!.uid, at: now.toISOString() }];
    expect(JSON.parse(recordIntents(kept, [pods[1]!], now))).toEqual([...kept, { pod: 'swarm-worker-1', uid: pods[1]!.uid, at: now.toISOString() }]);
    expect(mayStillDelete(now, new Date(now.getTime() + INTENT_TTL_MS / 2 - 1))).toBe(true);
    expect(mayStillDelete(now, new Date(now.getTime() + INTENT_TTL_MS / 2))).toBe(false);
  });
});
