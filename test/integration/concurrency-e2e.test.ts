// One Swarm reconciled under concurrent changes and a burst of duplicate
// events, by Swarm deployed on real Knative (however many swarm-assign and
// swarm-restart pods its autoscaler runs meanwhile: that is Knative's choice,
// reported, not asserted): guarded writes make the deliveries converge, no
// update is lost, every pod pinned for a restart is restarted, and nothing
// about the namespace is dead-lettered.
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { apiServerEvent } from '../../lib/events/apiserver-event.js';
import { parse } from '../../lib/workerconfig/index.js';
import { readRestarts } from '../../lib/decisions/workspace.js';
import { apiClients, kwokStatefulSetYaml, servedNamespace, swarmYaml } from '../harness/cluster-fixtures.js';
import { kubectl } from '../harness/swarm-install.js';
import { handledEvents } from '../harness/swarm-on-knative.js';
import { seedStreams } from '../support/fixtures.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const NS = `conc-${process.pid}`;
const { core, readSwarm } = apiClients(kubeconfig, NS);
const served = servedNamespace(kubeconfig, NS);
// The resync ping (the PingSource's, every five minutes in a deploy) every few seconds: the
// ApiServerSource's adapter is rolled out anew whenever the set of enabled namespaces
// changes (another file's), and what changes while it lists sends no event.
let pinging: { stop(): void } | undefined;
beforeAll(() => {
  pinging = served.swarm.pinging(NS, 5_000);
});
afterAll(() => pinging?.stop());

const swarm = (jobs: string[]) => swarmYaml(NS, 'pool', { restart: { policy: 'Restart', handoff: 'BreakBeforeMake', maxUnavailable: 2 }, workload: { jobs } });
const getSwarm = () => readSwarm('pool');
const DUPLICATES = 20;
const duplicateId = (i: number) => `${NS}-duplicate-${i}`;

/** The swarm-assign pod (by name) that logged handling each of `ids`, from the pods still there. */
async function assignPodsHandling(ids: readonly string[]): Promise<Map<string, string>> {
  const wanted = new Set(ids);
  return new Map((await handledEvents(kubeconfig, ['swarm-assign'])).filter((h) => wanted.has(h.event)).map((h) => [h.event, h.pod]));
}

describe('concurrent changes and duplicate events, on real Knative', () => {
  it('converge on one Swarm under a burst of concurrent changes and duplicate events, losing no update', async () => {
    await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(NS, 'pool', 2));
    await kubectl(kubeconfig, ['apply', '-f', '-'], swarm(seedStreams));
    await eventually('first assignment', async () => (await getSwarm()).status?.phase === 'Running', 120_000);

    // A resize and a job-list change at the same moment, plus a burst of duplicate
    // events posted concurrently to the Broker (its Trigger delivers them to as many
    // swarm-assign pods as Knative runs).
    const jobs = [...seedStreams, 'stream:a', 'stream:b', 'stream:c', 'stream:d', 'stream:e'];
    await Promise.all([
      kubectl(kubeconfig, ['-n', NS, 'scale', 'sts/pool', '--replicas', '4']),
      kubectl(kubeconfig, ['apply', '-f', '-'], swarm(jobs)),
    ]);
    const object = JSON.parse(await kubectl(kubeconfig, ['-n', NS, 'get', 'swarm', 'pool', '-o', 'json'])) as Record<string, unknown>;
    const ids = Array.from({ length: DUPLICATES }, (_, i) => duplicateId(i));
    await Promise.all(ids.map((id) => served.swarm.publish(apiServerEvent({ verb: 'update', mode: 'resource', object: object as never, id }))));

    const done = await eventually('convergence at 4 replicas with the new jobs', async () => {
      const s = await getSwarm();
      const st = s.status;
      return st?.phase === 'Running' && st.readyReplicas === 4 && st.observedGeneration === s.metadata.generation && st.workers?.reduce((n, w) => n + w.jobs, 0) === jobs.length ? s : undefined;
    }, 120_000);

    const config = parse((await core.readNamespacedConfigMap({ namespace: NS, name: 'pool-config' })).data?.['config.yml'] ?? '');
    expect(config.version).toBe(done.status?.version);
    const all = Object.values(config.workloads).flatMap((w) => w.jobs);
    expect(all.sort()).toEqual([...jobs].sort());
    expect(Object.values(config.workloads).map((w) => w.jobs.length)).toEqual([8, 8, 8, 8]);

    // Every duplicate reached swarm-assign (its log says it handled it) rather than the dead-letter Service.
    const handledBy = await eventually(`all ${DUPLICATES} duplicates handled by swarm-assign`, async () => {
      const seen = await assignPodsHandling(ids);
      return seen.size === ids.length ? seen : undefined;
    }, 60_000, 1_000);
    const pods = new Set(handledBy.values());
    process.stderr.write(`[concurrency-e2e] the ${DUPLICATES} duplicates were handled by ${pods.size} swarm-assign pod(s): ${[...pods].join(', ')}\n`);

    // Every pod the functions had to restart (a uid pinned as holding an older share in
    // any ConfigMap version) was deleted. (KWOK itself sometimes deletes a freshly
    // recreated pod by name, so other deletions are not counted against Swarm.)
    const pinned = new Set(served.timeline.configMapWrites.flatMap((w) => readRestarts(w.annotations).steps.map((s) => s.staleUid)));
    expect(pinned.size).toBeGreaterThan(0);
    await eventually('every pinned pod restarted', async () => [...pinned].every((uid) => served.timeline.pods.get(uid)?.deletingAt !== undefined), 30_000);

    // Nothing about this namespace exhausted its retries (the dead-letter Service's log,
    // which other files' events share: only this namespace's are asked about).
    expect(await served.swarm.deadLetters(NS)).toEqual([]);
    expect((await served.swarm.deadLetters()).filter((id) => ids.includes(id))).toEqual([]);
  });
});
