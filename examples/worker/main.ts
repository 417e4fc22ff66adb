// The reference worker: runs as a pod of the Swarm's StatefulSet, reads its own
// share of the ConfigMap by pod name, follows the kubelet's updates, and says
// what it gained and lost. A real worker would start and stop its jobs where
// this one logs them.
//
// env: POD_NAME (downward API, required), CONFIG_PATH (default
// /etc/swarm/config.yml), PORT (default 8080), LOG_LEVEL (default info).
import { pino } from 'pino';
import { parse } from '../../lib/workerconfig/index.js';
import { createWorkerServer } from './server.js';
import { INITIAL_STATE, nextState, type WorkerState } from './state.js';
import { watchConfigFile } from './watch.js';

const log = pino({ name: 'swarm-worker', level: process.env.LOG_LEVEL ?? 'info' });

const podName = process.env.POD_NAME;
if (!podName) {
  log.fatal('POD_NAME is not set (give it from the downward API: fieldRef metadata.name)');
  process.exit(2);
}
const configPath = process.env.CONFIG_PATH ?? '/etc/swarm/config.yml';
const port = Number(process.env.PORT ?? 8080);

let state: WorkerState = INITIAL_STATE;

const watcher = watchConfigFile(
  configPath,
  (text) => {
    const step = nextState(state, text, podName, parse, new Date());
    state = step.state;
    const { jobs, version } = state.share;
    if (step.kind === 'changed') {
      const { gained, lost, kept } = step.change;
      log.info({ version, configVersion: state.configVersion, gained, lost, kept: kept.length, jobs: jobs.length }, text === undefined ? 'no config: owning nothing' : 'share changed');
    } else if (step.kind === 'unchanged') {
      log.debug({ version, configVersion: state.configVersion }, 'config reloaded, share unchanged');
    } else {
      log.warn({ error: step.error, version }, 'config rejected, keeping the current share');
    }
  },
  { onError: (error) => log.warn({ err: error }, 'reading the config failed') },
);

const server = createWorkerServer(() => ({ pod: podName, ...state }));
server.listen(port, () => log.info({ pod: podName, configPath, port }, 'worker started'));

function shutdown(signal: string): void {
  log.info({ signal }, 'stopping');
  watcher.close();
  server.close(() => process.exit(0));
}
process.once('SIGTERM', () => shutdown('SIGTERM'));
process.once('SIGINT', () => shutdown('SIGINT'));
