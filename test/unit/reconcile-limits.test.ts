// Writes that respect other owners and limits that hold: the merge patch of the
// fields Swarm owns, the size checks before a write, the compact restart
// bookkeeping and bounded condition messages. Pure decisions, no cluster.
import { describe, expect, it } from 'vitest';
import { KUBERNETES_LIMITS, LIMITS } from '../../lib/api/schema.js';
import { decideConfigMap } from '../../lib/decisions/configmap.js';
import { boundMessage } from '../../lib/decisions/condition-messages.js';
import { computeStatus } from '../../lib/decisions/status.js';
import { readLastChange, readRestarts, withRestarts, type RestartWorkspace } from '../../lib/decisions/workspace.js';
import { mergePatchBody } from '../../lib/kube/views.js';
import type { ConfigMapView } from '../../lib/kube/types.js';
import { parse, render } from '../../lib/workerconfig/index.js';
import { swarmOf } from '../support/fixtures.js';
import { sts, validSwarm, workerPod, written } from '../support/views.js';

/** The restart bookkeeping's annotation on the ConfigMap (lib/decisions/workspace.ts). */
const ANNOTATION_RESTARTS = 'k8slab.info/restarts';

const uuid = (i: number) => `0000${i}`.slice(-5).padStart(36, 'a');

/** A ConfigMap someone else also writes to: a finalizer is invisible to Swarm, these are not. */
function sharedConfigMap(): ConfigMapView {
  return {
    name: 'swarm-worker-config',
    namespace: 'ns',
    uid: 'cm-uid',
    resourceVersion: '42',
    labels: { team: 'streams' },
    annotations: { 'example.com/note': 'keep me' },
    ownerReferences: [{ apiVersion: 'example.com/v1', kind: 'Backup', name: 'nightly', uid: 'backup-uid' }],
    data: { 'other.yml': 'not ours', 'config.yml': '{}' },
  };
}

describe('the ConfigMap write carries only what Swarm owns', () => {
  const swarm = validSwarm(swarmOf());

  it('adopting a shared ConfigMap: foreign labels, annotations, owners and data keys are not in the patch, and survive it', () => {
    const observed = sharedConfigMap();
    const d = decideConfigMap({ swarm, statefulSet: sts(2), configMap: observed, pods: [workerPod(0), workerPod(1)] });
    if (d.kind !== 'converge') throw new Error(d.message);
    expect(d.write).toBe('update');
    const patch = d.patch!;
    expect(patch.resourceVersion).toBe('42');
    expect(Object.keys(patch.labels ?? {}).sort()).toEqual(['app.kubernetes.io/managed-by', 'k8slab.info/swarm']);
    expect(patch.annotations ?? {}).not.toHaveProperty('example.com/note');
    expect(Object.keys(patch.data ?? {})).toEqual(['config.yml']);
    // A merge patch replaces a list whole: the foreign owner is sent along with ours.
    expect(patch.ownerReferences?.map((o) => o.uid)).toEqual(['backup-uid', 'swarm-uid']);
    // What the API server receives: resourceVersion as the precondition, no finalizers, no foreign keys.
    const body = mergePatchBody(patch) as { metadata: Record<string, unknown>; data: Record<string, unknown> };
    expect(body.metadata.resourceVersion).toBe('42');
    expect(body.metadata).not.toHaveProperty('finalizers');
    expect(body.data).not.toHaveProperty('other.yml');
  });

  it('removes a key Swarm no longer wants with null, and sends nothing when nothing differs', () => {
    // Hot-reloading workers: no restart is recorded, so the converged ConfigMap has no restarts annotation.
    const reloading = validSwarm(swarmOf({ restart: { policy: 'None' } }));
    const pods = [workerPod(0), workerPod(1)];
    const settled = written(decideConfigMap({ swarm: reloading, statefulSet: sts(2), configMap: sharedConfigMap(), pods }));
    expect(settled.annotations).not.toHaveProperty(ANNOTATION_RESTARTS);
    expect(decideConfigMap({ swarm: reloading, statefulSet: sts(2), configMap: settled, pods })).toMatchObject({ kind: 'converge', write: 'none' });
    // A restart recorded for a pod that is gone is finished: its bookkeeping is removed.
    const version = readLastChange(settled.annotations)?.version ?? 0;
    const done: RestartWorkspace = { version, steps: [{ worker: 'swarm-worker-1', staleUid: 'gone', waitFor: [] }] };
    const stale: ConfigMapView = { ...settled, annotations: withRestarts(settled.annotations, done) };
    const d = decideConfigMap({ swarm: reloading, statefulSet: sts(2), configMap: stale, pods });
    if (d.kind !== 'converge') throw new Error(d.message);
    expect(d.patch).toEqual({ name: stale.name, namespace: 'ns', resourceVersion: stale.resourceVersion, annotations: { [ANNOTATION_RESTARTS]: null } });
  });
});

describe('limits checked before a write', () => {
  it('a config.yml over 1 MiB is refused before it is sent: ConfigMapTooLarge, with the size and the limit', () => {
    // Within the schema's caps, but multi-byte names: 3 bytes a character.
    const jobs = Array.from({ length: 3000 }, (_, i) => `${i}-${'€'.repeat(LIMITS.jobNameMaxLength - 6)}`);
    const swarm = validSwarm(swarmOf({ jobs }));
    const d = decideConfigMap({ swarm, statefulSet: sts(2), configMap: undefined, pods: [] });
    expect(d).toMatchObject({ kind: 'blocked', reason: 'ConfigMapTooLarge' });
    if (d.kind !== 'blocked') return;
    expect(d.message).toMatch(/would hold 1,\d{3},\d{3} bytes of data .* the limit is 1,048,576 bytes/);
  });

  it('the largest Swarm of plain names fits', () => {
    const jobs = Array.from({ length: LIMITS.maxJobs }, (_, i) => `${i}-`.padEnd(LIMITS.jobNameMaxLength, 'x'));
    const swarm = validSwarm(swarmOf({ jobs }));
    const d = decideConfigMap({ swarm, statefulSet: sts(3), configMap: undefined, pods: [] });
    expect(d.kind).toBe('converge');
    if (d.kind !== 'converge') return;
    expect(Buffer.byteLength(d.configMap.data['config.yml']!)).toBeLessThan(KUBERNETES_LIMITS.configMapDataBytes);
  });

  it('more replicas than a Swarm manages: TooManyWorkers, nothing written', () => {
    const d = decideConfigMap({ swarm: validSwarm(swarmOf()), statefulSet: sts(LIMITS.maxWorkers + 1), configMap: undefined, pods: [] });
    expect(d).toMatchObject({ kind: 'blocked', reason: 'TooManyWorkers' });
  });
});

describe('the restart bookkeeping annotation', () => {
  const workspace = (workers: number, waits: number): RestartWorkspace => ({
    version: 7,
    steps: Array.from({ length: workers }, (_, i) => ({
      worker: `swarm-worker-${i}`,
      staleUid: uuid(i),
      waitFor: Array.from({ length: waits }, (_, j) => `swarm-worker-${(i + j + 1) % workers}`),
    })),
  });

  it('round-trips, compactly: every worker of the largest Swarm pending stays far below 256 KiB', () => {
    const ws = workspace(LIMITS.maxWorkers, 3);
    const annotations = withRestarts({}, ws);
    expect(readRestarts(annotations)).toEqual(ws);
    expect(Buffer.byteLength(annotations[ANNOTATION_RESTARTS]!)).toBeLessThan(KUBERNETES_LIMITS.annotationsBytes / 4);
  });

  it('2,600 pending workers (the case that overflowed before) fit too', () => {
    const annotations = withRestarts({}, workspace(2600, 1));
    expect(Buffer.byteLength(annotations[ANNOTATION_RESTARTS]!)).toBeLessThan(KUBERNETES_LIMITS.annotationsBytes);
  });

  it('still reads the older verbose form', () => {
    const ws = workspace(3, 1);
    expect(readRestarts({ [ANNOTATION_RESTARTS]: JSON.stringify(ws) })).toEqual(ws);
    const unsealed = { ...ws, unsealed: ['swarm-worker-0', 'swarm-worker-2'] };
    expect(readRestarts({ [ANNOTATION_RESTARTS]: JSON.stringify(unsealed) })).toEqual(unsealed);
  });

  it('round-trips the unsealed workers (as ordinals), with steps or none: a write not yet sealed is never dropped', () => {
    const all = { ...workspace(LIMITS.maxWorkers, 3), unsealed: Array.from({ length: LIMITS.maxWorkers }, (_, i) => `swarm-worker-${i}`) };
    const annotations = withRestarts({}, all);
    expect(readRestarts(annotations)).toEqual(all);
    expect(Buffer.byteLength(annotations[ANNOTATION_RESTARTS]!)).toBeLessThan(KUBERNETES_LIMITS.annotationsBytes / 4);
    // A first assignment: nobody pinned yet, its workers unsealed.
    const first = { version: 1, steps: [], unsealed: ['swarm-worker-0', 'swarm-worker-1'] };
    expect(readRestarts(withRestarts({}, first))).toEqual(first);
    // Sealed, nothing pending: the annotation goes.
    expect(withRestarts({ [ANNOTATION_RESTARTS]: 'x' }, { version: 1, steps: [] })).toEqual({});
  });

  it('a damaged annotation reads as nothing pending', () => {
    expect(readRestarts({ [ANNOTATION_RESTARTS]: '{"v":1,"sts":"w","s":[["x"]]}' })).toEqual({ version: 1, steps: [] });
    expect(readRestarts({ [ANNOTATION_RESTARTS]: '{"v":"1","sts":"w","s":[]}' })).toEqual({ version: 0, steps: [] });
  });
});

describe('condition messages stay bounded', () => {
  /** The status of `n` workers, every one with its restart pending. */
  const restarting = (n: number) => {
    const pods = Array.from({ length: n }, (_, i) => workerPod(i));
    const workloads = Object.fromEntries(pods.map((p) => [p.name, { jobs: ['j'], version: 2 }]));
    const config = parse(render({ version: 2, workloads }));
    const workspace = { version: 2, steps: pods.map((p) => ({ worker: p.name, staleUid: p.uid, waitFor: [] })) };
    return computeStatus({ swarm: validSwarm(swarmOf()), now: '2026-11-22T00:00:00Z', statefulSet: sts(n), config, workspace, pods });
  };
  const readyMessage = (n: number) => restarting(n).conditions?.find((c) => c.type === 'Ready')?.message;

  it('names the first workers of a long list and counts the rest', () => {
    const named = Array.from({ length: LIMITS.workersNamedInMessages }, (_, i) => `swarm-worker-${i}`).join(', ');
    expect(readyMessage(LIMITS.workersNamedInMessages + 2)).toMatch(new RegExp(`${named}, … and 2 more$`));
    expect(readyMessage(2)).toMatch(/swarm-worker-0, swarm-worker-1$/);
  });

  it('1,000 workers restarting: every message well under 32 KiB', () => {
    const status = restarting(LIMITS.maxWorkers);
    expect(status.phase).toBe('Updating');
    for (const c of status.conditions ?? []) expect(Buffer.byteLength(c.message)).toBeLessThan(KUBERNETES_LIMITS.conditionMessageBytes / 4);
    expect(readyMessage(LIMITS.maxWorkers)).toMatch(/… and 980 more$/);
  });

  it('any message is cut to the limit', () => {
    expect(boundMessage('x'.repeat(100_000))).toHaveLength(LIMITS.conditionMessageMaxLength);
  });
});

describe('status reports the bookkeeping as recorded', () => {
  it('a finished restart still listed in the annotation is not Running yet', () => {
    const pods = [workerPod(0, { uid: 'new-uid' }), workerPod(1)];
    const config = parse(render({ version: 2, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 2 }, 'swarm-worker-1': { jobs: ['b'], version: 1 } } }));
    const recorded = { version: 2, steps: [{ worker: 'swarm-worker-0', staleUid: 'old-uid', waitFor: [] }] };
    const before = computeStatus({ swarm: validSwarm(swarmOf()), now: '2026-11-22T00:00:00Z', statefulSet: sts(2), config, workspace: recorded, pods });
    expect(before.phase).toBe('Updating');
    expect(before.workers?.[0]?.restartPending).toBe(false); // the pod itself runs the new share
    const cleared = computeStatus({ swarm: validSwarm(swarmOf({ jobs: ['a', 'b'] })), now: '2026-11-22T00:00:00Z', statefulSet: sts(2), config, workspace: { version: 2, steps: [] }, pods });
    expect(cleared.phase).toBe('Running');
  });

  it('steps of workers removed by a scale-down do not hold it back', () => {
    const config = parse(render({ version: 3, workloads: { 'swarm-worker-0': { jobs: ['a'], version: 3 } } }));
    const recorded = { version: 3, steps: [{ worker: 'swarm-worker-4', staleUid: 'gone', waitFor: [] }] };
    expect(computeStatus({ swarm: validSwarm(swarmOf({ jobs: ['a'] })), now: '2026-11-22T00:00:00Z', statefulSet: sts(1), config, workspace: recorded, pods: [workerPod(0)] }).phase).toBe('Running');
  });
});
