// Swarm on real Knative, on the real node: Serving + Eventing built from the
// pinned modules, Traefik as Serving's networking layer, Swarm deployed with
// `npm run deploy -- --image <the functions image built from the Dockerfile>`
// (test/harness/real-knative.ts). Events take the real path: ApiServerSource →
// Broker (MT channel-based, in-memory channel) → Triggers → the Knative
// Services swarm-assign / swarm-restart (routed through Traefik and, from
// zero, the activator) → replies back through the Broker.
//
// Asserted are observations only (Swarm status, the ConfigMap, the revision
// Deployments' replicas, the trace of a scale-up), with generous waits; no
// durations. Numbers (the cold path) are printed, not asserted.
//
// Traced throughout (issue 12 item 5): the collector runs in-cluster
// (knative-tracing.ts installTracing, before Swarm is deployed so the
// functions' queue-proxies read config-observability as patched), Knative and
// the functions export to it, and it forwards every span to a trace sink in
// this process, which pods reach at the node's bridge address.
//
// On a fresh cluster the install of Knative and the collector runs while the
// other files do (test/harness/knative-background.ts, started by the global
// setup); this file waits for it, and finds Swarm deployed by the first e2e
// file (swarm-on-knative.ts; deployed here if it is not).
import { writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { joinDocuments, splitDocuments } from '../../bin/deploy-plan.js';
import type { Swarm } from '../../lib/api/types.js';
import { assignmentOf, parse } from '../../lib/workerconfig/index.js';
import { defaultWorkDir, repoRoot } from '../controlplane/cluster.js';
import { NODE_IP } from '../controlplane/node-config.js';
import { apiClients } from '../harness/cluster-fixtures.js';
import { awaitKnativeInBackground } from '../harness/knative-background.js';
import { functionsServeLatest, restartingPoolManifests, scaleUpHops, traceFunctions, uninstallTracing } from '../harness/knative-tracing.js';
import { applySample, installKnativeWithTracing, kubectl, SYSTEM_NAMESPACE, uninstallSwarmAndKnative, waitReady } from '../harness/real-knative.js';
import { postToBroker, ROUTING_BROKER, routingManifests, startRecorder } from '../harness/routing-broker.js';
import { serveNamespace, swarmOnKnative } from '../harness/swarm-on-knative.js';
import { formatTrace, matches, startTraceSink, type Hop, type TraceSink } from '../harness/trace-sink.js';
import { withWorkerImage } from '../harness/worker-pool.js';
import { routingCases } from '../support/routing-cases.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const realNode = inject('realNode');
const workDir = inject('clusterWorkDir');
const NS = 'swarm';
/** The pool whose scale-up is traced (restartingPoolManifests). */
const TRACED = 'trace-worker';
/** The namespace of the routing test's own Broker. */
const ROUTING_NS = 'swarm-routing';
const { core, readSwarm } = apiClients(kubeconfig, NS);
const progress = (line: string) => process.stderr.write(`[knative-e2e] ${line}\n`);
const MINUTES = 60_000;

const jobsOf = (swarm: Swarm): string[] => (swarm.spec.workload?.jobs ?? []).map((j) => (typeof j === 'string' ? j : j.name));

/** Running with `replicas` Ready workers, each acknowledging its share, nothing uncovered; every job in exactly one worker's share. */
async function converged(replicas: number, timeoutMs = 5 * MINUTES): Promise<Swarm> {
  const swarm = await eventually(
    `Swarm Running with ${replicas} acknowledging workers`,
    async () => {
      const s = await readSwarm('swarm-worker');
      const st = s.status;
      const ok =
        st?.phase === 'Running' &&
        st.readyReplicas === replicas &&
        st.uncoveredJobs === 0 &&
        st.observedGeneration === s.metadata?.generation &&
        st.workers?.length === replicas &&
        st.workers.every((w) => w.coverage === 'Acknowledged');
      return ok ? s : undefined;
    },
    timeoutMs,
    1000,
  );
  const cm = await core.readNamespacedConfigMap({ namespace: NS, name: 'swarm-worker-config' });
  const shares = assignmentOf(parse(cm.data?.['config.yml'] ?? ''));
  expect(Object.keys(shares)).toHaveLength(replicas);
  const all = Object.values(shares).flat();
  expect([...all].sort()).toEqual([...jobsOf(swarm)].sort());
  expect(new Set(all).size).toBe(all.length);
  return swarm;
}

/** Replicas of the Deployment behind the Knative Service `service`'s latest revision: [desired, existing]. */
async function revisionReplicas(service: string): Promise<[number, number]> {
  const list = JSON.parse(await kubectl(kubeconfig, ['get', 'deployments', '-n', SYSTEM_NAMESPACE, '-l', `serving.knative.dev/service=${service}`, '-o', 'json'])) as {
    items: { metadata: { name: string }; spec: { replicas?: number }; status: { replicas?: number } }[];
  };
  return list.items.reduce<[number, number]>((acc, d) => [acc[0] + (d.spec.replicas ?? 0), acc[1] + (d.status.replicas ?? 0)], [0, 0]);
}

/** Swarm `name` Running with `replicas` Ready workers, nothing uncovered, its generation observed. */
async function running(name: string, replicas: number): Promise<void> {
  await eventually(`Swarm ${name} Running with ${replicas} workers`, async () => {
    const s = await readSwarm(name);
    const st = s.status;
    return st?.phase === 'Running' && st.readyReplicas === replicas && st.uncoveredJobs === 0 && st.observedGeneration === s.metadata?.generation;
  }, 5 * MINUTES, 1000);
}

describe.skipIf(!realNode)('Swarm on real Knative (Serving + Eventing + Traefik) on the real node', () => {
  let sink: TraceSink | undefined;
  let workerImage = '';

  beforeAll(async () => {
    // On a fresh cluster the global setup started the install (tracing included) when the cluster came up.
    const background = inject('knativeInstall');
    if (background) {
      await awaitKnativeInBackground(background.dir, progress);
      sink = await startTraceSink({ host: '0.0.0.0', port: background.sinkPort });
    } else {
      sink = await startTraceSink({ host: '0.0.0.0' });
      await installKnativeWithTracing(workDir, { kubeconfig, progress, sinkEndpoint: `http://${NODE_IP}:${sink.port}` });
    }
    // Swarm as the other e2e files found it (deployed by the first of them), its functions then
    // re-revisioned to export their spans; the sample's namespace served like theirs.
    const swarm = await swarmOnKnative({ kubeconfig, workDir, progress });
    const kubectlHere = (args: readonly string[], stdin?: string) => kubectl(kubeconfig, args, stdin);
    await traceFunctions(kubectlHere, SYSTEM_NAMESPACE);
    await functionsServeLatest(kubectlHere, SYSTEM_NAMESPACE, 5 * MINUTES);
    await serveNamespace(kubeconfig, NS, progress);
    await applySample(kubeconfig, swarm.workerImage);
    workerImage = swarm.workerImage;
  }, 40 * MINUTES);

  afterAll(async () => {
    if (sink) {
      // Every trace received, for a look after the run (the failure message holds only the closest one).
      // In .swarm/, which outlives a fresh cluster's work directory.
      const file = join(defaultWorkDir, 'knative-e2e-traces.txt');
      await writeFile(file, sink.traces().map(formatTrace).join('\n\n'));
      progress(`${sink.spans().length} spans in ${sink.traces().length} traces written to ${file}`);
      await sink.close();
    }
    // A fresh cluster (.swarm/test-<pid>) is deleted with everything on it right after this file,
    // which runs last (vitest.config.ts): undoing the install would only cost a minute. A reused
    // cluster keeps running, so it is undone there: the deployed ApiServerSource watches every
    // namespace labelled for Swarm, and the functions' ServiceAccounts are the ones the other e2e
    // files bind in theirs — left running, this Swarm would reconcile their Swarms too.
    if (basename(workDir).startsWith('test-')) {
      progress('fresh cluster: Swarm, Knative and the collector go with it');
      return;
    }
    await uninstallTracing((args) => kubectl(kubeconfig, args)).catch((error: unknown) => progress(`cleanup: uninstall tracing failed: ${String(error)}`));
    await uninstallSwarmAndKnative(kubeconfig, progress, { waitForNamespaces: true });
  }, 15 * MINUTES);

  it('routes the functions through Traefik: both Knative Services Ready at their cluster-local URL', async () => {
    const ksvc = JSON.parse(await kubectl(kubeconfig, ['get', 'ksvc', '-n', SYSTEM_NAMESPACE, '-o', 'json'])) as {
      items: { metadata: { name: string }; status?: { url?: string; conditions?: { type: string; status: string }[] } }[];
    };
    for (const name of ['swarm-assign', 'swarm-restart', 'swarm-dead-letter']) {
      const s = ksvc.items.find((i) => i.metadata.name === name);
      expect(s?.status?.conditions?.find((c) => c.type === 'Ready')?.status).toBe('True');
      expect(s?.status?.url).toBe(`http://${name}.${SYSTEM_NAMESPACE}.svc.cluster.local`);
    }
    // The KIngress Traefik marked Ready names Traefik's private Service as its load balancer.
    const ingress = JSON.parse(await kubectl(kubeconfig, ['get', 'ingresses.networking.internal.knative.dev', 'swarm-assign', '-n', SYSTEM_NAMESPACE, '-o', 'json'])) as {
      metadata: { annotations?: Record<string, string> };
      status?: { privateLoadBalancer?: { ingress?: { domainInternal?: string }[] } };
    };
    expect(ingress.metadata.annotations?.['networking.knative.dev/ingress.class']).toBe('traefik.ingress.networking.knative.dev');
    expect(ingress.status?.privateLoadBalancer?.ingress?.[0]?.domainInternal).toBe('traefik-private.traefik.svc.cluster.local');
  });

  it("routes by knative/base/triggers.yaml's filters in a real Broker: each kind of event to the one function the table names, the rest nowhere", async () => {
    // A Broker of its own: the Triggers' filters as shipped, their subscribers a recorder in this process.
    const recorder = await startRecorder();
    try {
      await kubectl(kubeconfig, ['create', 'namespace', ROUTING_NS]).catch(() => undefined);
      await kubectl(kubeconfig, ['apply', '-f', '-'], joinDocuments(routingManifests(ROUTING_NS, `http://${NODE_IP}:${recorder.port}`)));
      await waitReady(kubeconfig, ROUTING_NS, 'broker', [ROUTING_BROKER], progress);
      await waitReady(kubeconfig, ROUTING_NS, 'trigger', ['swarm-assign', 'swarm-restart'], progress);
      const ingress = `http://${(await kubectl(kubeconfig, ['get', 'service', 'broker-ingress', '-n', 'knative-eventing', '-o', 'jsonpath={.spec.clusterIP}'])).trim()}`;
      const cases = routingCases();
      for (const c of cases) expect({ what: c.what, status: await postToBroker(ingress, ROUTING_NS, c.event) }).toEqual({ what: c.what, status: 202 });
      const expected = cases.flatMap((c) => c.routes.map((trigger) => ({ what: c.what, trigger })));
      const byId = new Map(cases.map((c) => [c.event.id, c.what]));
      const got = () => recorder.delivered.map((d) => ({ what: byId.get(d.id) ?? `unknown event ${d.id}`, trigger: d.trigger }));
      // Until every expected delivery came (or a minute passed: the comparison below then shows what is missing);
      // anything routed where it should not be comes meanwhile: the filter drops or delivers in milliseconds.
      await eventually(`${expected.length} deliveries`, async () => recorder.delivered.length >= expected.length || undefined, 60_000, 250).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 3000));
      const order = (a: { what: string; trigger: string }, b: { what: string; trigger: string }) => `${a.what} ${a.trigger}`.localeCompare(`${b.what} ${b.trigger}`);
      expect(got().sort(order)).toEqual(expected.sort(order));
    } finally {
      await recorder.close();
      await kubectl(kubeconfig, ['delete', 'namespace', ROUTING_NS, '--wait=false']).catch(() => undefined);
    }
  }, 5 * MINUTES);

  it('converges the seed sample (27 streams, 2 workers) through the real broker', async () => {
    const swarm = await converged(2);
    expect(jobsOf(swarm)).toHaveLength(27);
  }, 10 * MINUTES);

  it('converges a scale-up (kubectl scale swm 2 → 3) through the real broker', async () => {
    await kubectl(kubeconfig, ['scale', 'swm/swarm-worker', '-n', NS, '--replicas', '3']);
    await converged(3);
    const sts = JSON.parse(await kubectl(kubeconfig, ['get', 'sts', 'swarm-worker', '-n', NS, '-o', 'json'])) as { spec: { replicas: number } };
    expect(sts.spec.replicas).toBe(3);
  }, 10 * MINUTES);

  it("traces a scale-up as one trace, from Knative's own spans and the functions': ingress → filter → assign (its API calls, the reply) → ingress → filter → restart (its deletes)", async () => {
    // The sample's workers hot-reload and acknowledge before restart acts (its scale-up above deleted
    // no pod): this pool's pods acknowledge nothing and its losers restart first (BreakBeforeMake), so
    // the write that shrinks trace-worker-0's share, announced by assign's reply, makes restart delete that pod.
    const sample = splitDocuments(await kubectl(kubeconfig, ['kustomize', join(repoRoot, 'knative', 'samples')]));
    const pool = restartingPoolManifests(sample, { name: TRACED, replicas: 1, jobs: 4 });
    await kubectl(kubeconfig, ['apply', '-f', '-'], withWorkerImage(joinDocuments(pool), workerImage));
    await running(TRACED, 1);
    const scaledUpAt = BigInt(Date.now()) * 1_000_000n; // ns; the node shares this machine's clock
    await kubectl(kubeconfig, ['scale', `swm/${TRACED}`, '-n', NS, '--replicas', '2']);
    // The traces of this scale-up only: the pool's first assignment restarted its pod too.
    const [ingress, ...rest] = scaleUpHops({ namespace: SYSTEM_NAMESPACE });
    const afterScaleUp: Hop = { ...ingress!, match: (span) => span.startTimeUnixNano >= scaledUpAt && matches(span, ingress!.match) };
    const hop = (id: string): Hop => rest.find((h) => h.id === id)!;
    const { tree, check } = await sink!.waitForTrace([afterScaleUp, ...rest.filter((h) => h.id !== 'restart-delete')], AbortSignal.timeout(4 * MINUTES));
    progress(`the trace of the scale-up's restart:\n${formatTrace(tree)}`);
    expect(check.problems).toEqual([]);
    // restart's delete of the loser, as one trace from Knative's ingress too. Usually it is in the
    // reconcile above; but another event (that pod's own, its status updated around the scale) may
    // reach assign, whose reply (restarts are due) reaches restart first, and that reconcile reads
    // the same step and deletes it: it is not the event that decides (a key, fresh reads), so
    // either trace may hold the delete.
    const loserDeleted: Hop = {
      ...hop('restart-delete'),
      match: (span) => span.startTimeUnixNano >= scaledUpAt && matches(span, { service: 'swarm-restart', name: 'kube DELETE pods', kind: 'client', attributes: { 'kube.name': `${TRACED}-0` } }),
    };
    // (No filter hop here: a trace holds one for each Trigger the first event reached, and the
    // restart Trigger's refuses a Swarm event; the reconcile under the ingress is the one.)
    const restart: Hop = { id: 'restart', match: hop('restart').match, under: 'ingress' };
    const deleted = await sink!.waitForTrace([ingress!, restart, loserDeleted], AbortSignal.timeout(4 * MINUTES));
    expect(deleted.check.problems).toEqual([]);
    expect(deleted.check.matched['restart-delete']!.attributes).toMatchObject({ 'kube.name': `${TRACED}-0`, 'http.response.status_code': 200 });
    await running(TRACED, 2);
  }, 10 * MINUTES);

  it('scales both functions to zero when idle, then a kubectl scale wakes assign through the activator and the Swarm converges again', async () => {
    for (const service of ['swarm-assign', 'swarm-restart']) {
      await eventually(`${service} at 0 pods`, async () => {
        const [desired, existing] = await revisionReplicas(service);
        return desired === 0 && existing === 0;
      }, 10 * MINUTES, 1000);
    }
    const asked = Date.now();
    await kubectl(kubeconfig, ['scale', 'swm/swarm-worker', '-n', NS, '--replicas', '2']);
    const woke = await eventually('swarm-assign woken (≥ 1 pod)', async () => ((await revisionReplicas('swarm-assign'))[0] > 0 ? Date.now() : undefined), 5 * MINUTES, 250);
    await converged(2);
    const done = Date.now();
    // The first event assign answered after the scale (its own log's timestamps; same machine clock).
    const logs = await kubectl(kubeconfig, ['logs', '-n', SYSTEM_NAMESPACE, '-l', 'serving.knative.dev/service=swarm-assign', '-c', 'function', '--tail=-1']);
    const answered = logs
      .split('\n')
      .flatMap((line) => {
        try {
          const entry = JSON.parse(line) as { msg?: string; time?: number };
          return entry.msg === 'handled' && typeof entry.time === 'number' && entry.time >= asked ? [entry.time] : [];
        } catch {
          return [];
        }
      })
      .sort((a, b) => a - b)[0];
    expect(answered).toBeDefined();
    progress(`cold path from zero: kubectl scale → assign's Deployment scaled up ${woke - asked} ms → first event answered ${(answered ?? 0) - asked} ms → converged at 2 ${done - asked} ms`);
  }, 20 * MINUTES);
});
