// One failover trial on the real node (docs/failure-detection.md): a settled
// pool of the sample's reference workers (2 pods, spec.failover), one worker
// frozen, cut off from the API server, or with its jobs hung; what the
// workers' own reports and the Swarm's status show until the pool runs every
// job exactly once again. Pure observation: the e2e test asserts on the
// result, bench:failover aggregates many.
import { CoordinationV1Api, type V1Pod } from '@kubernetes/client-node';
import type { Swarm } from '../../lib/api/types.js';
import { FAILOVER_PROTOCOL, parse, PROTOCOL_ANNOTATION, type WorkerConfig } from '../../lib/workerconfig/index.js';
import { eventually } from '../support/timeline.js';
import { apiClients } from './cluster-fixtures.js';
import type { EndToEnd } from './end-to-end.js';
import { kubectl } from './swarm-install.js';
import { readText } from './node-containers.js';
import { isStopped, WorkerFaults, workerPids } from './worker-faults.js';
import { runningExactlyOnce, sampleSwarmYaml, swarmSettled, WORKER_SELECTOR, workerPoolYaml } from './worker-pool.js';

export type Fault = 'freeze' | 'partition' | 'hang';
export type Handoff = 'MakeBeforeBreak' | 'BreakBeforeMake';

/** The sample's lease (knative/samples/swarm.yaml), which its readiness probe is sized for. */
export const LEASE_SECONDS = 15;
const POOL = 'swarm-worker';
const CONFIG = 'swarm-worker-config';

export interface TrialResult {
  readonly fault: Fault;
  readonly victim: string;
  /** The victim's jobs when the fault began. */
  readonly share: readonly string[];
  readonly faultAt: number;
  /** When the peer's own job.started reports covered the whole share (ms after the fault); undefined: not within the wait. */
  readonly takeoverMs?: number;
  /** The Swarm's status once it had handed the share over (or the last one read). */
  readonly expiredStatus?: { uncoveredJobs: number | undefined; reason: string | undefined; names: boolean };
  /** The fault still in place when that status was read (a freeze: every process still stopped). */
  readonly faultInPlaceAtStatus: boolean;
  /** The victim's container was restarted (its liveness probe) during the trial. */
  readonly restarted: boolean;
  /** Jobs the victim started after the fault that its share at that config version did not name (`job@version`). */
  readonly strayStarts: readonly string[];
  /** From the fault until the pool ran every job exactly once again, by the workers' reports. */
  readonly duplicateSeconds: number;
  readonly uncoveredSeconds: number;
  /** When every job ran exactly once again (ms after the fault). */
  readonly recoveredMs: number;
  /** When the takeover or the status was not seen: the victim's pod, acknowledgement and heartbeat as they were, to read a failure by. */
  readonly diagnosis?: string;
}

/** A namespace's pool and Swarm, observed by an EndToEnd world. */
export class FailoverPool {
  readonly statuses: Swarm['status'][] = [];
  readonly faults = new WorkerFaults();
  private readonly api;

  constructor(
    readonly world: EndToEnd,
    readonly kubeconfig: string,
    readonly namespace: string,
    readonly jobs: readonly string[],
  ) {
    this.api = apiClients(kubeconfig, namespace);
  }

  /** The sample pool (2 workers, with the hang hook) under a Swarm with failover and `handoff`; waits until settled. */
  async deploy(handoff: Handoff): Promise<void> {
    await kubectl(this.kubeconfig, ['apply', '-f', '-'], workerPoolYaml(this.namespace, 2, this.world.workerImage, { HANG_JOBS_ON_SIGNAL: 'SIGUSR2' }));
    await this.switchTo(handoff);
  }

  async switchTo(handoff: Handoff): Promise<void> {
    await kubectl(this.kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(this.namespace, this.jobs, { policy: 'None', handoff, replicas: 2, leaseSeconds: LEASE_SECONDS }));
    await this.settled();
    // A worker reads the handoff at each renewal: one renewal after failover.yml reached its volume
    // (read from the node, through its process's root), it acts on it.
    for (const name of [`${POOL}-0`, `${POOL}-1`]) {
      const seenAt = await eventually(`${name} has handoff ${handoff} in its volume`, async () => {
        const pid = workerPids(await this.pod(name))[0];
        const text = pid === undefined ? undefined : readText(`/proc/${pid}/root/etc/swarm/failover.yml`);
        return text?.includes(`handoff: ${handoff}`) ? Date.now() : undefined;
      }, 90_000, 200);
      await eventually(`${name} renewed its heartbeat since`, async () => {
        const renewed = (await this.lease(`${name}.heartbeat`))?.spec?.renewTime;
        return (renewed && new Date(renewed).getTime() > seenAt) || undefined;
      }, 60_000, 200);
    }
  }

  private lease = (name: string) =>
    this.api.kc.makeApiClient(CoordinationV1Api).readNamespacedLease({ namespace: this.namespace, name }).catch(() => undefined);

  config = async (): Promise<WorkerConfig> =>
    parse((await this.api.core.readNamespacedConfigMap({ namespace: this.namespace, name: CONFIG })).data?.['config.yml'] ?? '');
  pod = (name: string): Promise<V1Pod> => this.api.core.readNamespacedPod({ namespace: this.namespace, name });
  swarm = async (): Promise<Swarm> => {
    const s = await this.api.readSwarm(POOL);
    this.statuses.push(s.status);
    return s;
  };

  /** Settled: both pods Ready, no handoff marks, status Running over 2 acknowledged workers, every job run exactly once by their reports. */
  async settled(timeoutMs = 150_000): Promise<number> {
    await eventually(`${this.namespace}: settled on 2 workers`, async () => {
      const [s, config] = [await this.swarm(), await this.config()];
      const pods = (await this.api.core.listNamespacedPod({ namespace: this.namespace, labelSelector: WORKER_SELECTOR })).items;
      const ready = pods.length === 2 && pods.every((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
      // Each heartbeats, as its own acknowledgement says (protocol 2): only such a worker ever expires.
      const acks = await Promise.all(pods.map((p) => this.lease(p.metadata!.name!)));
      const heartbeating = acks.every((a, i) => a?.spec?.holderIdentity === pods[i]!.metadata?.uid && a?.metadata?.annotations?.[PROTOCOL_ANNOTATION] === FAILOVER_PROTOCOL);
      return (ready && heartbeating && swarmSettled(s, config, 2)) || undefined;
    }, timeoutMs);
    return (await runningExactlyOnce(this.world.workers, this.jobs, 2, { timeoutMs })).at;
  }

  /** The API server as a pod reaches it: the `kubernetes` Service's address and its endpoints. */
  private async apiServer(): Promise<{ serviceIp: string; endpoints: Array<{ ip: string; port: number }> }> {
    const service = await this.api.core.readNamespacedService({ namespace: 'default', name: 'kubernetes' });
    const endpoints = await this.api.core.readNamespacedEndpoints({ namespace: 'default', name: 'kubernetes' });
    return {
      serviceIp: service.spec?.clusterIP ?? '',
      endpoints: (endpoints.subsets ?? []).flatMap((s) => (s.addresses ?? []).flatMap((a) => (s.ports ?? []).map((p) => ({ ip: a.ip, port: p.port })))),
    };
  }

  /**
   * One trial: `fault` on `victim` (its peer is the other worker), held until
   * the Swarm showed the handover (or `holdMs` at most), then undone; returns
   * once every job runs exactly once again.
   */
  async trial(fault: Fault, victim = `${POOL}-1`, options: { waitMs?: number } = {}): Promise<TrialResult> {
    const waitMs = options.waitMs ?? 60_000;
    const share = (await this.config()).workloads[victim]?.jobs ?? [];
    const before = await this.pod(victim);
    const restartsBefore = before.status?.containerStatuses?.[0]?.restartCount ?? 0;
    const faultAt = Date.now();
    let pids: number[] = [];
    if (fault === 'freeze') pids = this.faults.freeze(before);
    else if (fault === 'partition') await this.faults.partition(before, await this.apiServer());
    else this.faults.hang(before);
    const inPlace = () => (fault === 'freeze' ? pids.every(isStopped) : fault === 'partition');
    try {
      // Taken over: every job of the share started on a peer after the fault, by the peer's own reports.
      const takenAt = await eventually(`${this.namespace}: ${victim}'s share started on its peer`, async () => {
        const starts = new Map<string, number>();
        for (const r of this.world.workers.reports) {
          if (r.event === 'job.started' && r.job && r.pod !== victim && r.time >= faultAt && share.includes(r.job)) starts.set(r.job, Math.min(starts.get(r.job) ?? Infinity, r.time));
        }
        return starts.size === share.length ? Math.max(...starts.values()) : undefined;
      }, waitMs, 100).catch(() => undefined);
      // The Swarm says so while the fault lasts: the victim expired, nothing uncovered.
      let expiredStatus: TrialResult['expiredStatus'];
      let faultInPlaceAtStatus = false;
      await eventually(`${this.namespace}: status shows ${victim} expired and nothing uncovered`, async () => {
        const st = (await this.swarm()).status;
        const ready = st?.conditions?.find((c) => c.type === 'Ready');
        expiredStatus = { uncoveredJobs: st?.uncoveredJobs, reason: ready?.reason, names: ready?.message?.includes(victim) ?? false };
        faultInPlaceAtStatus = inPlace();
        return (expiredStatus.uncoveredJobs === 0 && expiredStatus.reason === 'WorkersExpired' && expiredStatus.names) || undefined;
      }, 30_000, 200).catch(() => undefined);
      const diagnosis = takenAt === undefined || expiredStatus?.reason !== 'WorkersExpired' ? await this.diagnose(victim) : undefined;
      await this.faults.undoAll();
      const at = await this.settled();
      const restarted = ((await this.pod(victim)).status?.containerStatuses?.[0]?.restartCount ?? 0) > restartsBefore;
      const report = this.world.workers.report(this.jobs, { from: faultAt, to: at });
      return {
        fault,
        victim,
        share,
        faultAt,
        ...(takenAt === undefined ? {} : { takeoverMs: takenAt - faultAt }),
        ...(expiredStatus ? { expiredStatus } : {}),
        faultInPlaceAtStatus,
        restarted,
        strayStarts: this.strayStarts(victim, faultAt),
        duplicateSeconds: report.totals.duplicateSeconds,
        uncoveredSeconds: report.totals.uncoveredSeconds,
        recoveredMs: at - faultAt,
        ...(diagnosis ? { diagnosis } : {}),
      };
    } finally {
      await this.faults.undoAll();
    }
  }

  private async diagnose(victim: string): Promise<string> {
    const pod = await this.pod(victim).catch(() => undefined);
    const [ack, beat] = [await this.lease(victim), await this.lease(`${victim}.heartbeat`)];
    const status = (await this.swarm()).status;
    return JSON.stringify({
      now: new Date().toISOString(),
      uid: pod?.metadata?.uid,
      conditions: pod?.status?.conditions?.map((c) => `${c.type}=${c.status}@${c.lastTransitionTime?.toISOString?.() ?? String(c.lastTransitionTime)}`),
      containers: pod?.status?.containerStatuses?.map((c) => ({ ready: c.ready, restarts: c.restartCount, state: c.state })),
      ack: { holder: ack?.spec?.holderIdentity, annotations: ack?.metadata?.annotations },
      heartbeat: { holder: beat?.spec?.holderIdentity, renewTime: beat?.spec?.renewTime, labels: beat?.metadata?.labels },
      status: { phase: status?.phase, version: status?.version, uncovered: status?.uncoveredJobs, conditions: status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`) },
    });
  }

  /** The victim's starts after `from` that its share, in the config version it reported, did not name. */
  private strayStarts(victim: string, from: number): string[] {
    const shares = new Map<number, readonly string[]>();
    for (const write of this.world.timeline.configMapWrites) {
      if (write.name !== CONFIG) continue;
      const config = parse(write.data['config.yml'] ?? '');
      shares.set(config.version, config.workloads[victim]?.jobs ?? []);
    }
    return this.world.workers.reports
      .filter((r) => r.event === 'job.started' && r.pod === victim && r.time >= from && r.job)
      .filter((r) => !(r.configVersion !== undefined && shares.get(r.configVersion)?.includes(r.job!)))
      .map((r) => `${r.job}@${r.configVersion}`);
  }
}
