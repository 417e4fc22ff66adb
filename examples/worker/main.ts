// The reference worker: runs as a pod of the Swarm's pool on the TypeScript
// SDK (sdk/typescript), which follows the pod's share of the ConfigMap,
// acknowledges it in the pod's Lease and drains on SIGTERM
// (docs/worker-protocol.md). It "runs" a job by reporting it: each start and
// stop is one JSON log line (report.ts), logged in the SDK's callbacks. A real
// worker would start and stop its jobs where this one reports them.
//
// env: the protocol's (POD_NAME required, POD_UID, POD_NAMESPACE, SWARM_POOL,
// CONFIG_PATH, SWARM_RESTART_POLICY, DRAIN_CONFIGMAP, DRAIN_STATEFULSET: see
// docs/worker-protocol.md §2), PORT (default 8080), LOG_LEVEL (default info).
import { destination, pino, stdTimeFunctions } from 'pino';
import { createWorker, type JobContext } from '../../sdk/typescript/src/index.js';
import { lifecycleReport, type JobReport, type Report, type Reporter } from './report.js';
import { hangHook } from './hang-hook.js';
import { createWorkerServer } from './server.js';

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
const port = Number(process.env.PORT ?? 8080);

// Reports are logged at info whatever LOG_LEVEL says: the recorder depends on them.
const reports = log.child({}, { level: 'info' });
const report = (r: Report): void => reports.info(r, r.event.replace('.', ' '));
const jobReport = (event: JobReport['event'], job: string, context: JobContext): JobReport => ({
  event,
  job,
  version: context.shareVersion,
  configVersion: context.configVersion,
  pod: reporter.pod,
  ...(reporter.uid ? { uid: reporter.uid } : {}),
});

report(lifecycleReport('worker.started', reporter));

// A test hook (off unless HANG_JOBS_ON_SIGNAL is set: hang-hook.ts): jobs that stop making progress.
const hang = hangHook(process.env.HANG_JOBS_ON_SIGNAL, () => worker.status().running, (jobs) => log.warn({ jobs }, 'test hook: these jobs hang now'));

const worker = createWorker({
  start: (job, context) => report(jobReport('job.started', job, context)),
  stop: (job, context) => {
    report(jobReport('job.stopped', job, context));
    hang.stopped(job);
  },
  health: (jobs) => hang.health(jobs),
  log,
});

const server = createWorkerServer(() => {
  const { share, configVersion, loadedAt, stopping } = worker.status();
  return { ...reporter, share, configVersion, loadedAt, stopping };
}, worker.healthy, worker.ready);
server.listen(port, () => {
  const address = server.address();
  log.info({ pod: podName, port: typeof address === 'object' && address ? address.port : port }, 'listening');
});

await worker.run();
// Every job stopped (and reported): the pod's end is then in its own log.
report(lifecycleReport('worker.stopped', reporter));
server.close(() => process.exit(0));
// Keep-alive connections (probes) must not hold the exit past the grace period.
server.closeAllConnections();
