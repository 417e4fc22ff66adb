// A functions host (functions/server.ts's start) with shortcuts switched off,
// for bench:reconcile: SWARM_BENCH_SHORTCUTS_OFF names them, comma-separated
// (lib/reconcilers/shortcuts.ts); none named, all on as in production.
import { start } from '../functions/server.js';
import { SHORTCUTS, type Shortcuts } from '../lib/reconcilers/shortcuts.js';

const off = (process.env.SWARM_BENCH_SHORTCUTS_OFF ?? '').split(',').filter((s) => s !== '');
const unknown = off.filter((s) => !SHORTCUTS.includes(s as keyof Shortcuts));
if (unknown.length > 0) {
  process.stderr.write(`SWARM_BENCH_SHORTCUTS_OFF: no shortcut ${unknown.join(', ')} (there are ${SHORTCUTS.join(', ')})\n`);
  process.exit(2);
}
const started = await start(process.env, { shortcuts: Object.fromEntries(off.map((s) => [s, false])) as Partial<Shortcuts> });
const stop = () => void started.close().then(() => process.exit(0));
process.once('SIGTERM', stop);
process.once('SIGINT', stop);
