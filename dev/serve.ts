// npm run serve: one function host against KUBECONFIG, the production entry
// point as the image runs it. FUNCTION=assign|restart serves that function's
// CloudEvents on POST /; FUNCTION=all serves both in one process, each on
// POST /functions/<name>, with no broker in front: whoever posts routes (an
// assign's reply comes back in its answer, for the caller to post to restart),
// and nothing pings the resync. Swarm with its Broker, Triggers and sources is
// `npm start` (real Knative on the local cluster).
import { start } from '../functions/server.js';
import { stopOnSignals } from './shutdown.js';

start(process.env).then(
  (started) => void stopOnSignals(() => started.close()),
  (err: unknown) => {
    process.stderr.write(`swarm serve: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  },
);
