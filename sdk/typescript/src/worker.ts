// A Swarm worker (docs/worker-protocol.md, protocol 1) around two callbacks:
// the application says how to start and stop one job; this follows the
// mounted config.yml (or reads it once, restart policy Restart), calls stop
// before start on each change, acknowledges what runs in the pod's Lease,
// drains or hands over on SIGTERM, and judges its own health. With failover
// (protocol 2: failover.yml beside config.yml) it also renews a heartbeat and
// fences itself when it cannot (heartbeat.ts, fence.ts).
import { basename } from 'node:path';
import { parse } from '../../../lib/workerconfig/index.js';
import { configMapReader, departureOf, statefulSetReader, waitUntilReleased } from './drain.js';
import { createFailover } from './failover.js';
import type { Readiness } from './fence.js';
import { JobRunner, type Callbacks, type JobContext } from './jobs.js';
import { inCluster, inClusterClient, mountedNamespace, type InClusterOptions, type KubeClient } from './kube.js';
import { createAcknowledger, leaseApi, poolOf, type LeaseApi } from './lease.js';
import type { Share } from './share.js';
import { INITIAL_STATE, nextState, type WorkerState } from './state.js';
import { watchConfigFile, type ConfigFileWatcher } from './watch.js';

export type RestartPolicy = 'None' | 'Restart';

export interface Logger {
  debug(fields: object, message: string): void;
  info(fields: object, message: string): void;
  warn(fields: object, message: string): void;
}

export interface WorkerOptions extends Callbacks {
  /** Each defaults to the environment variable of docs/worker-protocol.md §2. */
  pod?: string;
  podUid?: string;
  namespace?: string;
  pool?: string;
  configPath?: string;
  restartPolicy?: RestartPolicy;
  drainConfigMap?: string;
  drainStatefulSet?: string;
  /** How long one start or stop may run before the worker counts it overrun (defaults 30 s, 10 s). */
  startDeadlineMs?: number;
  stopDeadlineMs?: number;
  /** The API server and credentials (default: the pod's); or a client of your own. */
  kube?: InClusterOptions | KubeClient;
  /** The Lease calls (default: over `kube`); tests give a fake. */
  leases?: LeaseApi;
  /** SIGTERM drains then stops, SIGINT stops (default true). */
  handleSignals?: boolean;
  drainIntervalMs?: number;
  /** Seconds before a failed start is tried again: 1, doubling to 30. */
  retryBaseMs?: number;
  log?: Logger;
  env?: NodeJS.ProcessEnv;
  /** A monotonic clock in ms (default performance.now): the renew deadline is kept by it; tests jump it. */
  now?: () => number;
}

export interface WorkerStatus {
  readonly pod: string;
  readonly uid: string | undefined;
  /** This worker's share as last applied (its jobs, including any whose start failed). */
  readonly share: Share;
  /** The jobs that run now: started, and not stopped. */
  readonly running: readonly string[];
  readonly configVersion: number | undefined;
  readonly loadedAt: string | undefined;
  readonly stopping: boolean;
}

export interface Worker {
  /** Starts following the config; resolves once the worker stopped every job to exit. */
  run(): Promise<void>;
  /** What SIGTERM (drain, then stop) or SIGINT (stop at once) does. */
  terminate(signal: 'SIGTERM' | 'SIGINT'): void;
  healthy(): Promise<boolean>;
  /** For the readiness probe: with failover, false while fenced or (MakeBeforeBreak) stale or unhealthy. */
  ready(): Promise<Readiness>;
  status(): WorkerStatus;
}

const quiet: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: (fields, message) => process.stderr.write(`${JSON.stringify({ level: 'warn', msg: message, ...errorsAsText(fields) })}\n`),
};
function errorsAsText(fields: object): object {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, v instanceof Error ? v.message : v]));
}
const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

export function createWorker(options: WorkerOptions): Worker {
  const env = options.env ?? process.env;
  const pod = options.pod ?? env.POD_NAME;
  if (!pod) throw new Error('POD_NAME is not set (give it from the downward API: fieldRef metadata.name)');
  const podUid = options.podUid ?? (env.POD_UID || undefined);
  const kubeOptions = options.kube && 'request' in options.kube ? undefined : (options.kube as InClusterOptions | undefined);
  const namespace = options.namespace ?? (env.POD_NAMESPACE || mountedNamespace(kubeOptions?.serviceAccountDir));
  const configPath = options.configPath ?? env.CONFIG_PATH ?? '/etc/swarm/config.yml';
  const restartPolicy: RestartPolicy = options.restartPolicy ?? (env.SWARM_RESTART_POLICY === 'Restart' ? 'Restart' : 'None');
  const drainConfigMap = options.drainConfigMap ?? (env.DRAIN_CONFIGMAP || undefined);
  const drainStatefulSet = options.drainStatefulSet ?? (env.DRAIN_STATEFULSET || undefined);
  const stopMs = options.stopDeadlineMs ?? 10_000;
  const retryBaseMs = options.retryBaseMs ?? 1000;
  const log = options.log ?? quiet;

  const client: KubeClient | undefined =
    options.kube && 'request' in options.kube ? options.kube : inCluster(kubeOptions) ? inClusterClient(kubeOptions) : undefined;
  const leases = options.leases ?? (client ? leaseApi(client) : undefined);
  const acknowledge =
    leases && podUid && namespace
      ? createAcknowledger({ pod, podUid, namespace, api: leases, ...(options.pool ?? env.SWARM_POOL ? { statefulSet: options.pool ?? env.SWARM_POOL } : {}) })
      : undefined;
  if (!acknowledge) log.info({}, 'not in a cluster with POD_UID and a ServiceAccount token: not acknowledging');
  if (acknowledge && !poolOf(pod, options.pool ?? env.SWARM_POOL)) throw new Error(`cannot tell the pool of pod ${pod}; set SWARM_POOL`);

  const now = options.now ?? (() => performance.now());
  const runner = new JobRunner(
    options,
    { startMs: options.startDeadlineMs ?? 30_000, stopMs },
    (kind, job, err) => log.warn({ err, job }, kind === 'health' ? 'the health check failed' : `${kind} failed`),
    now,
  );
  let state: WorkerState = INITIAL_STATE;
  const failed = new Map<string, number>(); // job → attempts so far
  const retries = new Set<NodeJS.Timeout>();
  let stopping = false;
  let terminating = false;
  let acknowledged = '';
  let chain: Promise<void> = Promise.resolve();
  let pending: { text: string | undefined } | undefined;
  const serial = (work: () => Promise<void>): Promise<void> => (chain = chain.then(work, work));

  // Failover (protocol 2): the heartbeat, and the fence it closes when it goes stale (failover.ts).
  const failover = createFailover({
    pod,
    ...(podUid ? { podUid } : {}),
    ...(namespace ? { namespace } : {}),
    pool: poolOf(pod, options.pool ?? env.SWARM_POOL) ?? pod,
    ...(leases ? { leases } : {}),
    configPath,
    log,
    now,
    healthy: () => runner.healthy(),
    configVersion: () => state.configVersion,
    running: () => runner.running.size,
    redeliver: (text) => deliver(text),
    reacknowledge: () => {
      acknowledged = '';
      acknowledgeState();
    },
    // Under BreakBeforeMake, stale: every job stopped, and the share held as none until the fence lifts.
    stopAll: () =>
      serial(async () => {
        for (const timer of retries) clearTimeout(timer);
        retries.clear();
        failed.clear();
        const ctx = contextOf(state.share.version, state.configVersion);
        await Promise.all([...runner.running].map((job) => runner.stop(job, ctx)));
        state = { ...state, share: { jobs: [], version: state.share.version } };
        acknowledgeState();
      }),
  });
  const contextOf = (shareVersion: number, configVersion: number | undefined): JobContext => ({ shareVersion, configVersion, mayAct: failover.mayAct });

  function acknowledgeState(): void {
    // Fenced, waiting for an empty share (W27): it says so, at the version it holds if it applied none yet (none held: nothing to say yet).
    const fenced = failover.saysFenced();
    const version = state.configVersion ?? (fenced ? failover.heldVersion() : undefined);
    if (!acknowledge || version === undefined || stopping) return;
    const jobs = state.share.jobs.filter((job) => runner.running.has(job));
    const protocol = failover.protocol();
    const said = `${version}:${protocol}:${fenced}:${jobs.join(',')}`;
    if (said === acknowledged) return;
    acknowledged = said;
    acknowledge({ version, jobs, ...(protocol ? { protocol } : {}), ...(fenced ? { fenced } : {}) }).then(
      () => log.info({ version, jobs: jobs.length, ...(fenced ? { fenced } : {}) }, 'acknowledged'),
      (err: unknown) => {
        if (acknowledged === said) acknowledged = '';
        log.warn({ err, version }, 'acknowledgement failed');
      },
    );
  }

  async function startJob(job: string, context: JobContext): Promise<void> {
    if ((await runner.start(job, context)) === 'running') {
      failed.delete(job);
      return;
    }
    const attempts = (failed.get(job) ?? 0) + 1;
    failed.set(job, attempts);
    const timer = setTimeout(() => {
      retries.delete(timer);
      void serial(async () => {
        if (stopping || !failover.mayStart() || !failed.has(job) || !state.share.jobs.includes(job)) return;
        await startJob(job, contextOf(state.share.version, state.configVersion));
        acknowledgeState();
      });
    }, Math.min(30_000, retryBaseMs * 2 ** (attempts - 1)));
    retries.add(timer);
  }

  async function apply(text: string | undefined): Promise<void> {
    if (failover.hold(text)) return;
    const step = nextState(state, text, pod!, parse, new Date());
    if (step.kind === 'rejected') {
      log.warn({ error: step.error, version: state.share.version }, 'config rejected, keeping the current share');
      return;
    }
    if (step.kind === 'changed') {
      const { lost, gained } = step.change;
      const stopContext = contextOf(state.share.version, step.state.configVersion);
      await Promise.all(lost.map((job) => (failed.delete(job) ? undefined : runner.stop(job, stopContext))));
      if (stopping) return;
      state = step.state;
      log.info({ version: state.share.version, configVersion: state.configVersion, gained, lost, jobs: state.share.jobs.length }, text === undefined ? 'no config: owning nothing' : 'share changed');
      const startContext = contextOf(state.share.version, state.configVersion);
      await Promise.all(gained.map((job) => startJob(job, startContext)));
      if (stopping) return;
    } else {
      state = step.state;
    }
    acknowledgeState();
  }

  /** Newest text wins: texts that arrive while one is applied are coalesced. */
  function deliver(text: string | undefined): void {
    const idle = pending === undefined;
    pending = { text };
    if (idle) {
      void serial(async () => {
        const next = pending!;
        pending = undefined;
        if (!stopping) await apply(next.text);
      });
    }
  }

  let watcher: ConfigFileWatcher | undefined;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  const onSigterm = () => terminate('SIGTERM');
  const onSigint = () => terminate('SIGINT');

  async function drain(): Promise<void> {
    if (!client || !namespace || !drainConfigMap) return;
    log.info({ configMap: drainConfigMap }, 'stopping once my jobs are handed over');
    const read = configMapReader(client, namespace, drainConfigMap, basename(configPath));
    const range = drainStatefulSet ? statefulSetReader(client, namespace, drainStatefulSet) : undefined;
    await waitUntilReleased({
      pod: pod!,
      read,
      parse,
      ...(options.drainIntervalMs ? { intervalMs: options.drainIntervalMs } : {}),
      onError: (err) => log.warn({ err }, 'reading the config to drain failed'),
      ...(range ? { departure: async () => departureOf(drainStatefulSet!, pod!, await range()) } : {}),
    }).catch(() => undefined);
  }

  /** Every running job stopped, bounded by the stop deadline: the process's exit ends what overruns it. */
  async function stopEverything(): Promise<void> {
    stopping = true;
    watcher?.close();
    for (const timer of retries) clearTimeout(timer);
    failover.close();
    const ctx = contextOf(state.share.version, state.configVersion);
    const stopRunning = () => Promise.all([...runner.running].map((job) => runner.stop(job, ctx)));
    const work = (async () => {
      await stopRunning();
      await chain; // a start in flight when we began: stop it once it returned
      await stopRunning();
    })();
    await Promise.race([work, sleep(stopMs)]);
    state = { ...state, share: { jobs: [], version: state.share.version }, stopping: true };
  }

  function terminate(signal: 'SIGTERM' | 'SIGINT'): void {
    if (terminating) return;
    terminating = true;
    log.info({ signal }, 'stopping');
    void (async () => {
      if (signal === 'SIGTERM') await drain();
      await stopEverything();
      process.off('SIGTERM', onSigterm);
      process.off('SIGINT', onSigint);
      finished();
    })();
  }

  return {
    run() {
      if (options.handleSignals !== false) {
        process.once('SIGTERM', onSigterm);
        process.once('SIGINT', onSigint);
      }
      let readOnce = false;
      watcher = watchConfigFile(
        configPath,
        (text) => {
          if (readOnce) return;
          // Restart policy: the first config read is the one this pod runs (W7).
          if (restartPolicy === 'Restart' && text !== undefined) {
            readOnce = true;
            queueMicrotask(() => watcher?.close());
          }
          deliver(text);
        },
        { onError: (error) => log.warn({ err: error }, 'reading the config failed') },
      );
      failover.start();
      return done;
    },
    terminate,
    healthy: () => runner.healthy(),
    ready: (): Promise<Readiness> => failover.ready({ loaded: state.loadedAt !== undefined, stopping: state.stopping }),
    status: () => ({
      pod: pod!,
      uid: podUid,
      share: state.share,
      running: [...runner.running].sort(),
      configVersion: state.configVersion,
      loadedAt: state.loadedAt,
      stopping: state.stopping,
    }),
  };
}
