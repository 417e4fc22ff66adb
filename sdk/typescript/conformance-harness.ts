// The conformance harness of the TypeScript SDK (sdk/conformance/README.md):
// an application whose callbacks report each call on stdout and obey the
// runner's commands on stdin (hold a call, fail one, call a job sick), and
// answers what the SDK says of itself (health, readiness, mayAct).
import { createInterface } from 'node:readline';
import { createWorker, type JobContext } from './src/index.js';

const emit = (event: object): void => void process.stdout.write(`${JSON.stringify(event)}\n`);
const key = (callback: string, job: string) => `${callback} ${job}`;
const holds = new Map<string, { release?: () => void }>();
const fails = new Set<string>();
const sick = new Set<string>();
/** The context of the latest callback: its mayAct answers for the worker (W29). */
let latest: JobContext | undefined;

/** One callback: reported, then held or failed as told. */
async function call(callback: 'start' | 'stop', job: string, context: JobContext): Promise<void> {
  latest = context;
  emit({ event: callback, job });
  const k = key(callback, job);
  if (fails.delete(k)) throw new Error(`${k}: told to fail`);
  const hold = holds.get(k);
  if (hold) await new Promise<void>((resolve) => (hold.release = resolve));
  holds.delete(k);
}

const env = process.env;
const ms = (name: string) => (env[name] ? Number(env[name]) : undefined);
/** The SDK's log on stderr, which the runner shows when a step fails. */
const line = (level: string) => (fields: object, message: string) =>
  void process.stderr.write(`${level} ${message} ${JSON.stringify(fields, (_k, v: unknown) => (v instanceof Error ? v.message : v))}\n`);
const worker = createWorker({
  log: { debug: () => undefined, info: line('info'), warn: line('warn') },
  start: (job, context) => call('start', job, context),
  stop: (job, context) => call('stop', job, context),
  health: () => sick.size === 0,
  ...(env.SWARM_HARNESS_SERVICEACCOUNT_DIR ? { kube: { serviceAccountDir: env.SWARM_HARNESS_SERVICEACCOUNT_DIR } } : {}),
  ...(ms('SWARM_HARNESS_START_DEADLINE_MS') ? { startDeadlineMs: ms('SWARM_HARNESS_START_DEADLINE_MS') } : {}),
  ...(ms('SWARM_HARNESS_STOP_DEADLINE_MS') ? { stopDeadlineMs: ms('SWARM_HARNESS_STOP_DEADLINE_MS') } : {}),
});

createInterface({ input: process.stdin }).on('line', (line) => {
  if (!line.trim()) return;
  const command = JSON.parse(line) as { cmd: string; callback?: string; job?: string };
  const k = key(command.callback ?? '', command.job ?? '');
  switch (command.cmd) {
    case 'run':
      void worker.run().then(() => process.exit(0));
      break;
    case 'hold':
      holds.set(k, {});
      break;
    case 'release': {
      const hold = holds.get(k);
      holds.delete(k);
      hold?.release?.();
      break;
    }
    case 'fail':
      fails.add(k);
      break;
    case 'sick':
      sick.add(command.job ?? '');
      break;
    case 'well':
      sick.delete(command.job ?? '');
      break;
    case 'health':
      void worker.healthy().then((healthy) => emit({ event: 'health', healthy }));
      break;
    case 'readiness':
      void worker.ready().then((readiness) => emit({ event: 'readiness', ready: readiness.ready }));
      break;
    case 'mayAct':
      emit({ event: 'mayAct', mayAct: latest?.mayAct() ?? false });
      break;
    default:
      process.stderr.write(`unknown command ${line}\n`);
  }
});
emit({ event: 'ready' });
