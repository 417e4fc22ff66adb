// The shortcuts' switches (lib/reconcilers/shortcuts.ts): each switched off,
// the event takes the long way — what the simulator's --compare and
// bench:reconcile rely on to show what a shortcut changes and saves.
import { describe, expect, it } from 'vitest';
import { assignFunction } from '../../functions/assign/index.js';
import type { Trigger } from '../../lib/events/types.js';
import type { ConfigMapView } from '../../lib/kube/types.js';
import { cachedConfigReader, createCoalescer, uncoalesced, type Shortcuts } from '../../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { nextConfig, render } from '../../lib/workerconfig/index.js';
import { silentLog, swarmOf } from '../support/fixtures.js';
import { MemoryKube } from '../support/memory-kube.js';

const echo: Trigger = {
  source: 'apiserver',
  verb: 'update',
  mode: 'resource',
  namespace: 'ns',
  kind: 'Swarm',
  apiVersion: 'k8slab.info/v1alpha1',
  name: 'swarm',
  statefulSetName: 'swarm-worker',
  generationObserved: true,
};

async function convergedWith(shortcuts: Partial<Shortcuts>) {
  const kube = new MemoryKube();
  kube.addSwarm(swarmOf({ jobs: ['a', 'b', 'c'] }));
  kube.setStatefulSet('ns', 'swarm-worker', 2);
  for (let i = 0; i < 2; i++) kube.startPod('ns', 'swarm-worker', i);
  const env: ReconcileEnv = { kube, now: () => new Date('2026-11-22T00:00:00Z'), component: 'test', log: silentLog, shortcuts };
  const assign = assignFunction(env, createCoalescer());
  await assign.handle({ ...echo, generationObserved: undefined } as Trigger);
  kube.calls = [];
  kube.writes = [];
  return { kube, assign };
}

describe('the shortcuts switched off', () => {
  it('without the echo skip, the echo of a status write is reconciled like any Swarm update (a whole look, nothing written)', async () => {
    const on = await convergedWith({});
    await on.assign.handle(echo);
    expect(on.kube.calls).toEqual([]);
    const off = await convergedWith({ echoSkip: false });
    await off.assign.handle(echo);
    expect([...off.kube.calls].sort()).toEqual(['getConfigMap', 'getStatefulSet', 'listLeases', 'listPods', 'listSwarmsNaming']);
    expect(off.kube.writes).toEqual([]);
  });

  it('without the config cache, every read parses afresh', () => {
    const text = render(nextConfig(undefined, { 'w-0': ['a'], 'w-1': ['b'] }));
    const configMap: ConfigMapView = { name: 'cm', namespace: 'ns', uid: 'off-uid', resourceVersion: '3', labels: {}, annotations: {}, ownerReferences: [], data: { 'config.yml': text } };
    const first = cachedConfigReader(configMap, false)(text);
    const again = cachedConfigReader(configMap, false)(text);
    expect(again.previous).not.toBe(first.previous);
    expect(again.previous).toStrictEqual(first.previous);
  });

  it('without the coalescer, every caller runs its own reconcile', async () => {
    let runs = 0;
    const reconcile = async () => {
      runs++;
      await new Promise((r) => setTimeout(r, 5));
      return runs;
    };
    const answers = await Promise.all([1, 2, 3].map(() => uncoalesced.run('k', reconcile)));
    expect(runs).toBe(3);
    expect(answers.every((a) => !a.shared)).toBe(true);
  });
});
