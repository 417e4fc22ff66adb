// npm run serve: one function host against KUBECONFIG. FUNCTION=assign|restart
// runs the production entry point as the image does; FUNCTION=all runs both
// functions in one process behind the local broker (dev/broker) on POST /,
// routing by knative/base/triggers.yaml, replies included, and, as the
// PingSource would, pings a resync of each namespace in SWARM_RESYNC_NAMESPACES
// (comma-separated) every SWARM_RESYNC_SECONDS (default 60). The broker is dev
// tooling: the image never ships it.
import { pathToFileURL } from 'node:url';
import { start } from '../functions/server.js';
import { createLocalBroker, type LocalBroker, type LocalBrokerOptions } from './broker/local-broker.js';
import { loadTriggers } from './broker/triggers.js';
import { resyncPeriodMs, startResyncTimer } from './resync-timer.js';
import { stopOnSignals } from './shutdown.js';

type Started = Awaited<ReturnType<typeof start>>;
type StartExtras = NonNullable<Parameters<typeof start>[1]>;

export interface ServedAll extends Started {
  broker: LocalBroker;
}

/** FUNCTION=all: a broker whose subscribers are this host's own function routes. */
export async function serveAll(
  env: NodeJS.ProcessEnv,
  extras: StartExtras & { onDelivery?: LocalBrokerOptions['onDelivery'] } = {},
): Promise<ServedAll> {
  const { onDelivery, ...startExtras } = extras;
  const subscribers: Record<string, string> = {};
  const broker = createLocalBroker({
    triggers: loadTriggers(),
    subscribers,
    ...(onDelivery ? { onDelivery } : {}),
    onDeadLetter: (d) =>
      extras.log?.warn({ trigger: d.trigger, type: d.event.type, id: d.event.id, status: d.status, body: d.body }, 'dead letter'),
  });
  const started = await start({ ...env, FUNCTION: 'all' }, { ...startExtras, front: broker.router });
  for (const fn of ['assign', 'restart']) subscribers[`swarm-${fn}`] = `http://127.0.0.1:${started.port}/functions/${fn}`;
  const namespaces = (env.SWARM_RESYNC_NAMESPACES ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  const resync = startResyncTimer(broker, namespaces, namespaces.length ? resyncPeriodMs(env) : 0);
  return {
    ...started,
    broker,
    close: async () => {
      resync.stop();
      broker.close();
      await started.close();
    },
  };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const host = process.env.FUNCTION === 'all' ? serveAll(process.env) : start(process.env);
  host.then(
    (started) => void stopOnSignals(() => started.close()),
    (err: unknown) => {
      process.stderr.write(`swarm serve: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exit(1);
    },
  );
}
