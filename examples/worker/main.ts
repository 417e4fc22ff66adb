// The reference worker: runs as a pod of the Swarm's StatefulSet, reads its own
// share of the ConfigMap by pod name, follows the kubelet's updates, and
// reports each job it starts and stops as one JSON log line (report.ts). A
// real worker would start and stop its jobs where this one reports them.
//
// Once it has started its jobs it acknowledges them in its Lease
// (acknowledge.ts) when it runs in a cluster with POD_UID and a token.
//
// A pod asked to stop does not stop at once on SIGTERM: with DRAIN_CONFIGMAP
// set it keeps its jobs until the config gives it none (drain.ts); in a
// StatefulSet (DRAIN_STATEFULSET) a pod replaced under its own name does so
// only while the ConfigMap says Swarm hands its jobs over first.
//
// env: POD_NAME (downward API metadata.name, required), POD_UID (downward API
// metadata.uid, optional: tells the recorder which incarnation of the pod
// spoke, and is the Lease's holderIdentity), POD_NAMESPACE (default: the
// mounted ServiceAccount's), CONFIG_PATH (default /etc/swarm/config.yml), PORT (default 8080),
// LOG_LEVEL (default info), SWARM_POOL (the pool's name for its Lease's label,
// from the pod's k8slab.info/swarm label; default: parsed from a StatefulSet pod's
// name), DRAIN_CONFIGMAP (the ConfigMap to wait on at SIGTERM; unset: stop at once),
// DRAIN_STATEFULSET (the pod's StatefulSet: whether it leaves it or is replaced).
import { destination, pino, stdTimeFunctions } from 'pino';
import { parse } from '../../lib/workerconfig/index.js';
import { basename } from 'node:path';
import { createAcknowledger, podNamespace, type Acknowledged } from './acknowledge.js';
import { configMapReader, departureOf, statefulSetReader, waitUntilReleased, type Departure } from './drain.js';
import { lifecycleReport, transitionReports, type Report, type Reporter } from './report.js';
import { createWorkerServer } from './server.js';
import { INITIAL_STATE, nextState, stopAll, type Transition, type WorkerState } from './state.js';
import { watchConfigFile } from './watch.js';

// ISO times: the reports are read by people as well as by the recorder.
// Synchronous writes: pino's default asynchronous stdout can put a line held
// back by a full pipe after later ones at exit, and reports must keep their order.
const log = pino(
  { name: 'swarm-worker', level: process.env.LOG_LEVEL ?? 'info', timestamp: stdTimeFunctions.isoTime },
  destination({ dest: 1, sync: true }),
);

const podName = process.env.POD_NAME;
if (!podName) {
  log.fatal('POD_NAME is not set (give it from the downward API: fieldRef metadata.name)');
  process.exit(2);
}
const reporter: Reporter = { pod: podName, uid: process.env.POD_UID || undefined };
const configPath = process.env.CONFIG_PATH ?? '/etc/swarm/config.yml';
const port = Number(process.env.PORT ?? 8080);

// Reports are logged at info whatever LOG_LEVEL says: the recorder depends on them.
const reports = log.child({}, { level: 'info' });
const report = (r: Report): void => reports.info(r, r.event.replace('.', ' '));

let state: WorkerState = INITIAL_STATE;

// Acknowledges only in a cluster, as a pod that knows its uid; elsewhere (a
// local process) status falls back to inference for this worker.
const namespace = podNamespace();
const acknowledge =
  process.env.KUBERNETES_SERVICE_HOST && reporter.uid && namespace
    ? createAcknowledger({ pod: podName, podUid: reporter.uid, namespace, ...(process.env.SWARM_POOL ? { statefulSet: process.env.SWARM_POOL } : {}) })
    : undefined;
if (!acknowledge) log.info('not in a cluster with POD_UID and a ServiceAccount token: not acknowledging');
let acknowledged = '';

/** After the jobs started: written when the loaded version or the jobs differ from the last acknowledgement. */
function acknowledgeState(): void {
  if (!acknowledge || state.configVersion === undefined || state.stopping) return;
  const ack: Acknowledged = { version: state.configVersion, jobs: state.share.jobs };
  const said = `${ack.version}:${[...ack.jobs].join(',')}`;
  if (said === acknowledged) return;
  acknowledged = said;
  acknowledge(ack).then(
    () => log.info({ version: ack.version, jobs: ack.jobs.length }, 'acknowledged'),
    (err: unknown) => {
      acknowledged = '';
      log.warn({ err, version: ack.version }, 'acknowledgement failed');
    },
  );
}

/** Applies a transition: the jobs stop and start here, each reported as it happens. */
function apply(step: Transition): void {
  const before = state;
  state = step.state;
  for (const r of transitionReports(before, step, reporter)) report(r);
}

report(lifecycleReport('worker.started', reporter));

const watcher = watchConfigFile(
  configPath,
  (text) => {
    const step = nextState(state, text, podName, parse, new Date());
    apply(step);
    const { jobs, version } = state.share;
    if (step.kind === 'changed') {
      const { gained, lost, kept } = step.change;
      log.info({ version, configVersion: state.configVersion, gained, lost, kept: kept.length, jobs: jobs.length }, text === undefined ? 'no config: owning nothing' : 'share changed');
    } else if (step.kind === 'unchanged') {
      log.debug({ version, configVersion: state.configVersion }, 'config reloaded, share unchanged');
    } else {
      log.warn({ error: step.error, version }, 'config rejected, keeping the current share');
    }
    acknowledgeState();
  },
  { onError: (error) => log.warn({ err: error }, 'reading the config failed') },
);

const server = createWorkerServer(() => ({ ...reporter, ...state }));
server.listen(port, () => {
  const address = server.address();
  log.info({ pod: podName, configPath, port: typeof address === 'object' && address ? address.port : port }, 'listening');
});

function shutdown(signal: string): void {
  log.info({ signal }, 'stopping');
  watcher.close();
  // Stop (and report) every job before exiting: the pod's end is then in its own log.
  apply(stopAll(state));
  report(lifecycleReport('worker.stopped', reporter));
  server.close(() => process.exit(0));
  // Keep-alive connections (probes) must not hold the exit past the grace period.
  server.closeAllConnections();
}
/** SIGTERM for a pod whose jobs are handed over: they run on until they are (drain.ts), then the worker stops. */
function drainThenShutdown(configMap: string, ns: string, departure?: () => Promise<Departure>): void {
  log.info({ configMap }, 'stopping once my jobs are handed over');
  const read = configMapReader(ns, configMap, basename(configPath));
  const onError = (err: unknown) => log.warn({ err }, 'reading the config to drain failed');
  waitUntilReleased({ pod: podName!, read, parse, onError, ...(departure ? { departure } : {}) }).then(
    () => shutdown('SIGTERM'),
    () => shutdown('SIGTERM'),
  );
}

/** A StatefulSet pod's departure, read now (drain.ts departureOf). */
function statefulSetDeparture(statefulSet: string, ns: string): () => Promise<Departure> {
  const read = statefulSetReader(ns, statefulSet);
  return async () => departureOf(statefulSet, podName!, await read());
}

const drainConfigMap = process.env.DRAIN_CONFIGMAP;
const drainStatefulSet = process.env.DRAIN_STATEFULSET;
process.once('SIGTERM', () => {
  if (!drainConfigMap || !namespace) return shutdown('SIGTERM');
  if (!drainStatefulSet) return drainThenShutdown(drainConfigMap, namespace);
  const departure = statefulSetDeparture(drainStatefulSet, namespace);
  // Unreadable now: drain, and let the wait's own rounds decide.
  void departure().then(
    (how) => {
      if (how !== 'ended') return drainThenShutdown(drainConfigMap, namespace, departure);
      log.info({ statefulSet: drainStatefulSet }, 'the StatefulSet is gone, nobody takes over: stopping at once');
      shutdown('SIGTERM');
    },
    (err: unknown) => {
      log.warn({ err, statefulSet: drainStatefulSet }, 'reading the StatefulSet failed; draining');
      drainThenShutdown(drainConfigMap, namespace, departure);
    },
  );
});
process.once('SIGINT', () => shutdown('SIGINT'));
