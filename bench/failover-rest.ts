// bench:failover's cost at rest: N workers heartbeating under a Swarm with
// failover, nothing changing, for a window; what the API server served
// (apiserver_request_total, all requests and Lease PUTs) and what reached
// Swarm's Broker from the namespace (each a function wake-up), against the
// same window with no workers. 100 real worker pods do not fit this node:
// the workers are KWOK pods (test/harness/kwok-acknowledger.ts acknowledges
// their shares until they settle) whose heartbeats the SDK's own loop
// (sdk/typescript/src/heartbeat.ts) renews from this process, one loop per
// pod, with the admin credentials.
import { writeFileSync } from 'node:fs';
import { CoordinationV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { createHeartbeat, type Heartbeat } from '../sdk/typescript/src/heartbeat.js';
import type { Lease, LeaseApi } from '../sdk/typescript/src/lease.js';
import { kwokStatefulSetYaml, swarmYaml } from '../test/harness/cluster-fixtures.js';
import { acknowledgeKwokPools } from '../test/harness/kwok-acknowledger.js';
import { kubectl } from '../test/harness/swarm-install.js';
import { recordBrokerEvents } from '../test/harness/swarm-on-knative.js';
import { eventually } from '../test/support/timeline.js';

/** How long the Broker must have taken nothing of the namespace before the window starts. */
const QUIET_MS = 15_000;

export interface RestCost {
  readonly workers: number;
  readonly windowSeconds: number;
  /** Events of the namespace the Broker took, per minute: each wakes a function (the resync ping included). */
  readonly wakeupsPerMinute: number;
  /** Every request the API server served, per minute, less the same with no workers (negative: noise). */
  readonly apiRequestsPerMinute: number;
  /** PUTs of Leases (the heartbeats' renewals), per minute, less the same with no workers. */
  readonly leasePutsPerMinute: number;
}

/** The API server's request counters: all requests, and Lease PUTs. */
async function requestCounts(kubeconfig: string): Promise<{ all: number; leasePuts: number }> {
  const text = await kubectl(kubeconfig, ['get', '--raw', '/metrics']);
  let all = 0;
  let leasePuts = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const value = Number(line.slice(line.lastIndexOf(' ') + 1));
    all += value;
    if (line.includes('resource="leases"') && line.includes('verb="PUT"')) leasePuts += value;
  }
  return { all, leasePuts };
}

function leaseApiOf(kubeconfig: string): LeaseApi {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const api = kc.makeApiClient(CoordinationV1Api);
  return {
    read: (namespace, name) => api.readNamespacedLease({ namespace, name }).then((l) => l as Lease, () => undefined),
    create: (namespace, lease) => api.createNamespacedLease({ namespace, body: lease as never }) as Promise<Lease>,
    replace: (namespace, lease) => api.replaceNamespacedLease({ namespace, name: lease.metadata!.name!, body: lease as never }) as Promise<Lease>,
  };
}

/** Requests and wake-ups over `windowMs` with nothing of ours running: what each measurement is compared with. */
export async function baseline(kubeconfig: string, windowMs: number): Promise<{ all: number; leasePuts: number }> {
  const before = await requestCounts(kubeconfig);
  await new Promise((r) => setTimeout(r, windowMs));
  const after = await requestCounts(kubeconfig);
  const perMinute = 60_000 / windowMs;
  return { all: (after.all - before.all) * perMinute, leasePuts: (after.leasePuts - before.leasePuts) * perMinute };
}

/**
 * `workers` KWOK workers (2 jobs each) under a Swarm with failover
 * (leaseSeconds `leaseSeconds`) in `namespace` (already served), settled; then
 * `windowMs` at rest, measured. Leaves the namespace's pool and Swarm deleted.
 */
export async function restCost(
  kubeconfig: string,
  namespace: string,
  workers: number,
  base: { all: number; leasePuts: number },
  options: { windowMs: number; leaseSeconds: number; progress: (line: string) => void; eventsFile?: string },
): Promise<RestCost> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const name = 'rest';
  const jobs = Array.from({ length: workers * 2 }, (_, i) => `job-${i}`);
  await kubectl(kubeconfig, ['apply', '-f', '-'], kwokStatefulSetYaml(namespace, name, workers, undefined, true));
  await kubectl(kubeconfig, ['apply', '-f', '-'], swarmYaml(namespace, name, { restart: { policy: 'None', handoff: 'MakeBeforeBreak', maxUnavailable: 1 }, failover: { leaseSeconds: options.leaseSeconds }, workload: { jobs } }));
  const acknowledger = acknowledgeKwokPools(kubeconfig, namespace, () => [name]);
  const leases = leaseApiOf(kubeconfig);
  const settings = { leaseSeconds: options.leaseSeconds, handoff: 'MakeBeforeBreak' as const };
  const beats: Heartbeat[] = [];
  try {
    const pods = await eventually(`${workers} KWOK pods Ready`, async () => {
      const items = (await core.listNamespacedPod({ namespace, labelSelector: `app=${name}` })).items;
      const ready = items.filter((p) => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      return ready.length === workers ? ready : undefined;
    }, 300_000, 1000);
    for (const pod of pods) {
      const beat = createHeartbeat({
        pod: pod.metadata!.name!,
        podUid: pod.metadata!.uid!,
        namespace,
        pool: name,
        api: leases,
        load: () => settings,
        healthy: async () => true,
        onStale: () => undefined,
        onFresh: () => undefined,
      });
      beats.push(beat);
      void beat.tick();
    }
    await eventually(`the Swarm over ${workers} workers settled`, async () => {
      const swarm = JSON.parse(await kubectl(kubeconfig, ['-n', namespace, 'get', 'swm', name, '-o', 'json'])) as { status?: { phase?: string; uncoveredJobs?: number } };
      return (swarm.status?.phase === 'Running' && swarm.status.uncoveredJobs === 0) || undefined;
    }, 300_000, 1000);
    // At rest: the acknowledgements are written; the acknowledger's own polling would be counted otherwise.
    await acknowledger.stop();
    const recorder = await recordBrokerEvents(kubeconfig, `rest-${namespace}`.slice(0, 63));
    const isOurs = (e: { subject?: unknown; data?: unknown }) => String(e.subject ?? '').includes(`/namespaces/${namespace}/`) || JSON.stringify(e.data ?? '').includes(`"${namespace}"`);
    // Settled by status is not at rest for the event source: creating 100 pods leaves it a backlog that
    // drains for a minute or more (Pod events delivered 58-71 s late, bench/RESULTS.md). The window
    // starts once the Broker has taken nothing of the namespace for QUIET_MS.
    const quietSince = await eventually(`the Broker quiet for ${QUIET_MS / 1000} s`, async () => {
      const last = recorder.events.filter(isOurs).length;
      await new Promise((r) => setTimeout(r, QUIET_MS));
      return recorder.events.filter(isOurs).length === last ? Date.now() : undefined;
    }, 600_000, 0);
    recorder.events.splice(0);
    options.progress(`${workers} worker(s) settled, the Broker quiet since ${new Date(quietSince - QUIET_MS).toISOString().slice(11, 19)}; measuring ${options.windowMs / 1000} s at rest`);
    const before = await requestCounts(kubeconfig);
    await new Promise((r) => setTimeout(r, options.windowMs));
    const after = await requestCounts(kubeconfig);
    await recorder.stop();
    const ours = recorder.events.filter(isOurs);
    const perMinute = 60_000 / options.windowMs;
    // What woke the functions, by kind and object (an ApiServerSource event's subject), to read a surprise by.
    const kinds = new Map<string, number>();
    for (const e of ours) {
      const key = `${e.type} ${String(e.subject ?? '').replace(/\/[^/]+$/, '/…')}`;
      kinds.set(key, (kinds.get(key) ?? 0) + 1);
    }
    if (ours.length > 0) options.progress(`${workers} worker(s), events in the window: ${JSON.stringify(Object.fromEntries(kinds))}`);
    // Every event whole, to read what changed between two of one object.
    if (ours.length > 0 && options.eventsFile) writeFileSync(options.eventsFile, JSON.stringify(ours, null, 1));
    return {
      workers,
      windowSeconds: options.windowMs / 1000,
      wakeupsPerMinute: ours.length * perMinute,
      apiRequestsPerMinute: (after.all - before.all) * perMinute - base.all,
      leasePutsPerMinute: (after.leasePuts - before.leasePuts) * perMinute - base.leasePuts,
    };
  } finally {
    for (const beat of beats) beat.close();
    await acknowledger.stop();
    await kubectl(kubeconfig, ['-n', namespace, 'delete', 'swm', name, '--ignore-not-found', '--wait=true']).catch(() => undefined);
    await kubectl(kubeconfig, ['-n', namespace, 'delete', 'sts', name, '--ignore-not-found', '--wait=true']).catch(() => undefined);
  }
}
