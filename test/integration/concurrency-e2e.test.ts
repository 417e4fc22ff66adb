// Two instances of each function (as Knative runs several pods of a busy
// Service) reconciling one Swarm at once, on the real control plane: guarded
// writes make them converge, and no update is lost.
import { describe, expect, inject, it } from 'vitest';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { parse } from '../../lib/workerconfig/index.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import { apiClients, kwokStatefulSetYaml, servedNamespace, swarmYaml } from '../harness/cluster-fixtures.js';
import { kubectl } from '../harness/local-knative.js';
import { seedStreams } from '../support/fixtures.js';
import { scrapeTotal } from '../support/metrics.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const NS = `conc-${process.pid}`;
const { core, readSwarm } = apiClients(kubeconfig, NS);
const served = servedNamespace(kubeconfig, NS, { instances: 2 });

const swarm = (jobs: string[]) => swarmYaml(NS, 'pool', { restart: { maxUnavailable: 2 }, workload: { jobs } });
const getSwarm = () => readSwarm('pool');

describe('two instances per function', () => {
  it('converge on one Swarm under a burst of concurrent changes and duplicate events, losing no update', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'pool', 2));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm(seedStreams));
    await eventually('first assignment', async () => (await getSwarm()).status?.phase === 'Running');

    // A resize and a job-list change at the same moment, plus a burst of duplicates
    // delivered round-robin to both assign instances.
    const jobs = [...seedStreams, 'stream:a', 'stream:b', 'stream:c', 'stream:d', 'stream:e'];
    await Promise.all([
      kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/pool', '--replicas', '4']),
      kubectl(kubeconfig, ['apply', '-f', '-'], swarm(jobs)),
    ]);
    const object = JSON.parse(await kubectl(kubeconfig, ['-n', NS, 'get', 'swarm', 'pool', '-o', 'json'])) as Record<string, unknown>;
    for (let i = 0; i < 20; i++) served.local.broker.publish(apiServerEvent({ verb: 'update', mode: 'resource', object: object as never }));

    const done = await eventually('convergence at 4 replicas with the new jobs', async () => {
      const s = await getSwarm();
      const st = s.status;
      return st?.phase === 'Running' && st.readyReplicas === 4 && st.observedGeneration === s.metadata.generation && st.workers?.reduce((n, w) => n + w.jobs, 0) === jobs.length ? s : undefined;
    }, 120_000);
    await served.local.broker.idle();

    const config = parse((await core.readNamespacedConfigMap({ namespace: NS, name: 'pool-config' })).data?.['config.yml'] ?? '');
    expect(config.version).toBe(done.status?.version);
    const all = Object.values(config.workloads).flatMap((w) => w.jobs);
    expect(all.sort()).toEqual([...jobs].sort());
    expect(Object.values(config.workloads).map((w) => w.jobs.length)).toEqual([8, 8, 8, 8]);

    // Every pod the functions had to restart (a uid pinned as holding an older share in
    // any ConfigMap version) was deleted exactly once, and the metrics counted exactly those.
    // (KWOK itself sometimes deletes a replacement pod by name; those are not ours.)
    const restartPorts = served.local.hosts.restart.map((h) => h.port);
    const pinned = new Set(served.timeline.configMapWrites.flatMap((w) => readRestarts(w.annotations).steps.map((s) => s.staleUid)));
    const restarted = [...served.timeline.pods.values()].filter((p) => pinned.has(p.uid) && p.deletingAt !== undefined);
    expect(restarted.length).toBeGreaterThan(0);
    expect(await scrapeTotal(restartPorts, 'swarm_pod_restarts_total')).toBe(restarted.length);
    const handledBy = await Promise.all(served.local.hosts.assign.map((h) => scrapeTotal([h.port], 'swarm_events_total')));
    expect(handledBy.every((n) => n > 0)).toBe(true);
    expect(served.local.broker.deadLetters).toEqual([]);
  });
});
