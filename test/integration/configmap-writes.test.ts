// The assign function's writes on the real API server, running under its own
// ServiceAccount: what other owners put on the ConfigMap survives, the largest
// Swarm the schema allows is stored and assigned, an oversize config is refused
// before it is sent, a real RBAC refusal is recorded instead of retried, and
// the Swarm as the API server holds it after assign's status write is read as
// that write's echo (nothing to reconcile) until its spec changes.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { join } from 'node:path';
import { assignFunction } from '../../functions/assign/index.js';
import { apiServerEvent, toTrigger } from '../../lib/events/index.js';
import { LIMITS } from '../../lib/api/schema.js';
import { createK8sClient, loadKubeConfig } from '../../lib/kube/k8s-client.js';
import { createCoalescer } from '../../lib/reconcilers/shortcuts.js';
import type { ReconcileEnv } from '../../lib/reconcilers/env.js';
import { silentLog } from '../support/fixtures.js';
import { parse } from '../../lib/workerconfig/index.js';
import { defaultWorkDir } from '../controlplane/cluster.js';
import { apiClients, swarmYaml } from '../harness/cluster-fixtures.js';
import { SYSTEM_NAMESPACE, enableNamespace, installSwarm, kubectl, serviceAccountKubeconfig } from '../harness/swarm-install.js';
import { seedStreams } from '../support/fixtures.js';

const kubeconfig = inject('kubeconfig');
const NS = `writes-${process.pid}`;
const { core, readSwarm: getSwarm } = apiClients(kubeconfig, NS);

let asAssign: ReconcileEnv;
let asRestart: ReconcileEnv;
const envFor = (path: string, component: string): ReconcileEnv => ({
  kube: createK8sClient(loadKubeConfig(path), { timeoutMs: 30_000 }),
  now: () => new Date(),
  component,
  log: silentLog,
});

beforeAll(async () => {
  await installSwarm(kubeconfig);
  await enableNamespace(kubeconfig, NS);
  const dir = join(defaultWorkDir, 'e2e', NS);
  asAssign = envFor(await serviceAccountKubeconfig(kubeconfig, 'swarm-assign', dir), 'swarm-assign');
  asRestart = envFor(await serviceAccountKubeconfig(kubeconfig, 'swarm-restart', dir), 'swarm-restart');
});

afterAll(async () => {
  // The finalizer is the test's own: release it so the namespace can go.
  await kubectl(kubeconfig, ['-n', NS, 'patch', 'configmap', 'shared-config', '--type=merge', '-p', '{"metadata":{"finalizers":null}}']).catch(() => undefined);
  await kubectl(kubeconfig, ['delete', 'namespace', NS, '--wait=false']).catch(() => undefined);
});

/** Its pods never run here; the template declares acknowledgement, which hot reload (policy None) needs. */
const statefulSet = (name: string, replicas: number) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}, namespace: ${NS}}
spec:
  serviceName: ${name}
  replicas: ${replicas}
  selector: {matchLabels: {app: ${name}}}
  template:
    metadata: {labels: {app: ${name}, k8slab.info/acknowledges: lease}}
    spec: {containers: [{name: worker, image: ${name}}]}
`;
const swarm = (name: string, jobs: unknown[]) => swarmYaml(NS, name, { restart: { policy: 'None' }, workload: { jobs } });
/** Server-side apply: docs/operations.md's advice for Swarms above client-side apply's 256 KiB annotation. */
const applySwarm = (doc: string) => kubectl(kubeconfig, ['apply', '--server-side', '-f', '-'], doc);
const trigger = (name: string) =>
  ({ source: 'apiserver', verb: 'update', mode: 'resource', apiVersion: 'k8slab.info/v1alpha1', kind: 'Swarm', namespace: NS, name }) as const;
const getConfigMap = (name: string) => core.readNamespacedConfigMap({ namespace: NS, name });
const condition = async (name: string, type: string) => (await getSwarm(name)).status?.conditions?.find((c) => c.type === type);

describe('ConfigMap writes on the real API server', () => {
  it('keep what other owners put there: finalizer, labels, annotations, owners and data keys survive every write', async () => {
    const owner = await core.createNamespacedConfigMap({ namespace: NS, body: { metadata: { name: 'backup-owner' } } });
    await core.createNamespacedConfigMap({
      namespace: NS,
      body: {
        metadata: {
          name: 'shared-config',
          finalizers: ['example.com/keep'],
          labels: { team: 'streams' },
          annotations: { 'example.com/note': 'keep me' },
          ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'backup-owner', uid: owner.metadata!.uid! }],
        },
        data: { 'other.yml': 'not ours', 'config.yml': '{}' },
      },
    });
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSet('shared', 2));
    await applySwarm(swarm('shared', seedStreams));
    const fn = assignFunction(asAssign, createCoalescer());

    expect((await fn.handle(trigger('shared'))).summary.swarms).toMatchObject([{ result: 'changed', version: 1 }]); // adopted
    await kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/shared', '--replicas', '3']);
    expect((await fn.handle(trigger('shared'))).summary.swarms).toMatchObject([{ result: 'changed', version: 2 }]);

    const cm = await getConfigMap('shared-config');
    expect(cm.metadata?.finalizers).toEqual(['example.com/keep']);
    expect(cm.metadata?.labels).toMatchObject({ team: 'streams', 'k8slab.info/swarm': 'shared' });
    expect(cm.metadata?.annotations).toMatchObject({ 'example.com/note': 'keep me' });
    expect(cm.metadata?.ownerReferences?.map((o) => o.name)).toEqual(['backup-owner', 'shared']);
    expect(cm.data?.['other.yml']).toBe('not ours');
    expect(parse(cm.data?.['config.yml'] ?? '').version).toBe(2);
    expect(cm.metadata?.managedFields?.map((f) => f.manager)).toContain('swarm');

    // Still guarded against lost updates: a patch from a stale read is refused.
    const stale = { name: 'shared-config', namespace: NS, resourceVersion: String(Number(cm.metadata!.resourceVersion) - 1), data: { 'config.yml': 'stale' } };
    await expect(asAssign.kube.patchConfigMap(stale)).rejects.toMatchObject({ kind: 'Conflict', status: 409 });
    expect((await getConfigMap('shared-config')).data?.['config.yml']).toBe(cm.data?.['config.yml']);
  });

  it("a Swarm update carrying assign's own status write is its echo: nothing read; a spec change is reconciled", async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSet('echo', 2));
    await applySwarm(swarm('echo', seedStreams.slice(0, 6)));
    const fn = assignFunction(asAssign, createCoalescer());
    expect((await fn.handle(trigger('echo'))).summary.swarms).toMatchObject([{ result: 'changed', version: 1 }]);
    // The object as the API server holds it after assign's status write, as the ApiServerSource would send it.
    const asSent = async () => toTrigger(apiServerEvent({ verb: 'update', mode: 'resource', object: (await getSwarm('echo')) as never }));
    const echo = await asSent();
    expect(echo).toMatchObject({ kind: 'Swarm', name: 'echo', generationObserved: true });
    expect((await fn.handle(echo)).summary.swarms).toEqual([]);
    // A spec change bumps the generation past the one status observed.
    await applySwarm(swarm('echo', seedStreams.slice(0, 7)));
    const change = await asSent();
    expect(change).not.toHaveProperty('generationObserved');
    expect((await fn.handle(change)).summary.swarms).toMatchObject([{ result: 'changed', version: 2 }]);
    expect(await asSent()).toMatchObject({ generationObserved: true });
  });

  it('the largest Swarm the schema allows is stored (server-side apply) and assigned', async () => {
    const jobs = Array.from({ length: LIMITS.maxJobs }, (_, i) => ({ name: `${i}-`.padEnd(LIMITS.jobNameMaxLength, 'x'), weight: LIMITS.maxWeight }));
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSet('largest', 2));
    // Why docs/operations.md says --server-side: client-side apply copies the object into an annotation.
    await expect(kubectl(kubeconfig, ['apply', '-f', '-'], swarm('largest', jobs))).rejects.toThrow(/Too long: .*262144 bytes/);
    await applySwarm(swarm('largest', jobs));
    const out = await assignFunction(asAssign, createCoalescer()).handle(trigger('largest'));
    expect(out.summary.swarms).toMatchObject([{ result: 'changed', version: 1 }]);
    const config = parse((await getConfigMap('largest-config')).data?.['config.yml'] ?? '');
    expect(Object.values(config.workloads).reduce((n, w) => n + w.jobs.length, 0)).toBe(LIMITS.maxJobs);
    expect((await getSwarm('largest')).status?.phase).not.toBe('Degraded');
  });

  it('an oversize config is refused before it is sent: ConfigMapTooLarge, a Warning Event, the ConfigMap unchanged, answered 2xx', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSet('oversize', 2));
    await applySwarm(swarm('oversize', seedStreams));
    const fn = assignFunction(asAssign, createCoalescer());
    await fn.handle(trigger('oversize'));
    const before = await getConfigMap('oversize-config');

    // Within every cap of the schema, but 3 bytes a character: config.yml would be > 1 MiB.
    const jobs = Array.from({ length: 3000 }, (_, i) => `${i}-${'€'.repeat(LIMITS.jobNameMaxLength - 6)}`);
    await applySwarm(swarm('oversize', jobs));
    const out = await fn.handle(trigger('oversize'));
    expect(out.status).toBe(202);
    expect(out.summary.swarms).toMatchObject([{ result: 'blocked', reason: 'ConfigMapTooLarge' }]);
    expect(await condition('oversize', 'Degraded')).toMatchObject({ status: 'True', reason: 'ConfigMapTooLarge' });
    expect((await condition('oversize', 'Degraded'))?.message).toMatch(/bytes of data .*the limit is 1,048,576 bytes/);
    const events = await core.listNamespacedEvent({ namespace: NS, fieldSelector: 'involvedObject.name=oversize,reason=ConfigMapTooLarge' });
    expect(events.items.map((e) => e.type)).toContain('Warning');
    const after = await getConfigMap('oversize-config');
    expect(after.metadata?.resourceVersion).toBe(before.metadata?.resourceVersion);
  });

  it("reports each real response's HTTP status to the instrumentation (spans and metrics get 200, 404, 409, not a guessed 2xx)", async () => {
    const seen: string[] = [];
    const kube = createK8sClient(loadKubeConfig(kubeconfig), {
      instrument: async (call, run, responseStatus) => {
        try {
          return await run();
        } finally {
          seen.push(`${call.verb} ${call.resource} ${responseStatus() ?? 'none'}`);
        }
      },
    });
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSet('statuses', 1));
    await applySwarm(swarm('statuses', ['a']));
    const found = await kube.getSwarm(NS, 'statuses');
    expect(await kube.getSwarm(NS, 'no-such-swarm')).toBeUndefined();
    await kube.createConfigMap({ name: 'statuses-config', namespace: NS, labels: {}, annotations: {}, ownerReferences: [], data: {} });
    await expect(kube.createConfigMap({ name: 'statuses-config', namespace: NS, labels: {}, annotations: {}, ownerReferences: [], data: {} })).rejects.toMatchObject({ kind: 'Conflict' });
    expect(found?.metadata.name).toBe('statuses');
    expect(seen).toEqual(['GET swarms 200', 'GET swarms 404', 'CREATE configmaps 201', 'CREATE configmaps 409']);
  });

  it('a real RBAC refusal (restart may not create ConfigMaps) is recorded as Forbidden, not retried', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], statefulSet('denied', 1));
    await applySwarm(swarm('denied', seedStreams));
    // restart's identity may write neither ConfigMaps nor status (assign owns both):
    // here it is let write status, in this namespace only, so the refusal can be recorded.
    await kubectl(kubeconfig, ['-n', NS, 'create', 'role', 'status-writer', '--verb=update,patch', '--resource=swarms.k8slab.info/status']);
    await kubectl(kubeconfig, ['-n', NS, 'create', 'rolebinding', 'status-writer', '--role=status-writer', `--serviceaccount=${SYSTEM_NAMESPACE}:swarm-restart`]);
    // (It lists the workers' acknowledgement Leases by its own role, so the ConfigMap create is the refused call.)
    // Run assign's reconcile with restart's identity: the create is denied by the real authorizer.
    const out = await assignFunction(asRestart, createCoalescer()).handle(trigger('denied'));
    expect(out.status).toBe(202);
    expect(out.summary.swarms).toMatchObject([{ result: 'blocked', reason: 'Forbidden' }]);
    const degraded = await condition('denied', 'Degraded');
    expect(degraded).toMatchObject({ status: 'True', reason: 'Forbidden' });
    expect(degraded?.message).toMatch(/^CREATE configmaps .*: 403/);
    // Once the right identity acts, it converges.
    expect((await assignFunction(asAssign, createCoalescer()).handle(trigger('denied'))).summary.swarms).toMatchObject([{ result: 'changed' }]);
    expect(await condition('denied', 'Degraded')).toMatchObject({ status: 'False' });
  });
});
