// Swarm on real Knative, on the real node: Serving + Eventing built from the
// pinned modules, Traefik as Serving's networking layer, Swarm deployed with
// `npm run deploy -- --image <the functions image built from the Dockerfile>`
// (test/harness/real-knative.ts). Events take the real path: ApiServerSource →
// Broker (MT channel-based, in-memory channel) → Triggers → the Knative
// Services swarm-assign / swarm-restart (routed through Traefik and, from
// zero, the activator) → replies back through the Broker.
//
// Asserted are observations only (Swarm status, the ConfigMap, the revision
// Deployments' replicas), with generous waits; no durations. Numbers (the
// cold path) are printed, not asserted.
import { basename } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Swarm } from '../../lib/api/types.js';
import { assignmentOf, parse } from '../../lib/workerconfig/index.js';
import { apiClients } from '../harness/cluster-fixtures.js';
import { applySample, deploySwarmOnKnative, installKnative, kubectl, SYSTEM_NAMESPACE, uninstallSwarmAndKnative } from '../harness/real-knative.js';
import { eventually } from '../support/timeline.js';

const kubeconfig = inject('kubeconfig');
const realNode = inject('realNode');
const workDir = inject('clusterWorkDir');
const NS = 'swarm';
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

describe.skipIf(!realNode)('Swarm on real Knative (Serving + Eventing + Traefik) on the real node', () => {
  beforeAll(async () => {
    const installed = await installKnative(workDir, { kubeconfig, progress });
    const deployed = await deploySwarmOnKnative(workDir, installed, { kubeconfig, progress, watchNamespaces: [NS] });
    // The minute's resync ping keeps assign warm (see below); this file watches it idle.
    await kubectl(kubeconfig, ['patch', 'pingsource', 'swarm-resync-swarm', '-n', SYSTEM_NAMESPACE, '--type', 'merge', '-p', '{"spec":{"schedule":"0 0 1 1 *"}}']);
    await applySample(kubeconfig, deployed.workerImage);
  }, 40 * MINUTES);

  afterAll(async () => {
    // A fresh cluster (.swarm/test-<pid>) is deleted with everything on it right after this file,
    // which runs last (vitest.config.ts): undoing the install would only cost a minute. A reused
    // cluster keeps running, so it is undone there: the deployed ApiServerSource watches every
    // namespace labelled for Swarm, and the functions' ServiceAccounts are the ones the other e2e
    // files bind in theirs — left running, this Swarm would reconcile their Swarms too.
    if (basename(workDir).startsWith('test-')) {
      progress('fresh cluster: Swarm and Knative go with it');
      return;
    }
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
