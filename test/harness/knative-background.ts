// Real Knative installed while the first files of the integration tier run:
// its install (images imported, Serving + Eventing + Traefik Ready, the
// collector and config-observability for tracing) takes two minutes or so of
// waiting on pods. The integration tier's global setup starts this file as a
// child process on a fresh cluster with a real node (startKnativeInBackground);
// the files served by Swarm on Knative wait for it, and the first of them
// deploys Swarm (swarm-on-knative.ts). Not deployed here: knative-manifests,
// which runs meanwhile, deploys and undeploys the installation itself. The child
// writes its progress to <dir>/knative-install.log and its outcome to
// <dir>/knative-install.json; it runs at a lower CPU priority than the tests
// and stops if the process that started it is gone.
//   tsx test/harness/knative-background.ts <workDir> <kubeconfig> <sinkEndpoint> <ownerPid>
import { spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, existsSync, openSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../controlplane/cluster.js';
import { installKnativeWithTracing, type InstalledKnative } from './real-knative.js';

export const LOG_FILE = 'knative-install.log';
export const OUTCOME_FILE = 'knative-install.json';

type Outcome = { ok: true; installed: InstalledKnative } | { ok: false; error: string };

export interface BackgroundInstall {
  /** Stops the install if it is still running (before the cluster goes). */
  stop(): Promise<void>;
}

/** Starts the install as a child process (its own process group, niced); its files go to `dir`. */
export function startKnativeInBackground(options: { dir: string; kubeconfig: string; sinkEndpoint: string }): BackgroundInstall {
  // Appended to by the child's own lines and by anything its tools print.
  writeFileSync(join(options.dir, LOG_FILE), '');
  const log = openSync(join(options.dir, LOG_FILE), 'a');
  const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');
  const child: ChildProcess = spawn(
    'nice',
    ['-n', '10', tsx, join(import.meta.dirname, 'knative-background.ts'), options.dir, options.kubeconfig, options.sinkEndpoint, String(process.pid)],
    { cwd: repoRoot, detached: true, stdio: ['ignore', log, log] },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      try {
        process.kill(-child.pid!, 'SIGTERM');
      } catch {
        return;
      }
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (child.exitCode === null && child.signalCode === null) {
        try {
          process.kill(-child.pid!, 'SIGKILL');
        } catch {
          // gone meanwhile
        }
      }
    },
  };
}

/** Waits for the install started in `dir`, printing its progress lines as they come; rejects with its error. */
export async function awaitKnativeInBackground(dir: string, progress: (line: string) => void, timeoutMs = 45 * 60_000): Promise<InstalledKnative> {
  const started = Date.now();
  let printed = 0;
  const printNew = () => {
    const lines = existsSync(join(dir, LOG_FILE)) ? readFileSync(join(dir, LOG_FILE), 'utf8').split('\n') : [];
    const complete = lines.slice(0, -1); // the last may still be being written
    for (const line of complete.slice(printed)) progress(`(background install) ${line}`);
    printed = Math.max(printed, complete.length);
  };
  // Done before this file asked (an earlier file waited and printed it all): say so in one line.
  if (existsSync(join(dir, OUTCOME_FILE))) printed = Number.POSITIVE_INFINITY;
  else progress(`waiting for the install of Knative started by the global setup (log: ${join(dir, LOG_FILE)})`);
  for (;;) {
    printNew();
    if (existsSync(join(dir, OUTCOME_FILE))) {
      const outcome = JSON.parse(readFileSync(join(dir, OUTCOME_FILE), 'utf8')) as Outcome;
      if (!outcome.ok) throw new Error(`the background Knative install failed: ${outcome.error}`);
      progress(`background install of Knative done; waited ${((Date.now() - started) / 1000).toFixed(1)} s for it`);
      return outcome.installed;
    }
    if (Date.now() - started > timeoutMs) throw new Error(`the background Knative install did not finish in ${timeoutMs / 60_000} min (log: ${join(dir, LOG_FILE)})`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

// As a child process: install, record the outcome, exit.
if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const [dir, kubeconfig, sinkEndpoint, owner] = process.argv.slice(2) as [string, string, string, string];
  const say = (line: string) => appendFileSync(join(dir, LOG_FILE), `${line}\n`);
  // The runner killed without its teardown: nothing is left to install for.
  setInterval(() => {
    try {
      process.kill(Number(owner), 0);
    } catch {
      say('the test runner is gone: stopping');
      process.exit(1);
    }
  }, 2000).unref();
  const outcome: Outcome = await installKnativeWithTracing(dir, { kubeconfig, progress: say, sinkEndpoint }).then(
    (installed): Outcome => ({ ok: true, installed }),
    (error: unknown): Outcome => ({ ok: false, error: error instanceof Error ? error.message : String(error) }),
  );
  // Written whole, then renamed: the waiter polls for the file and must never parse it half-written.
  writeFileSync(join(dir, `${OUTCOME_FILE}.part`), JSON.stringify(outcome));
  renameSync(join(dir, `${OUTCOME_FILE}.part`), join(dir, OUTCOME_FILE));
  process.exit(outcome.ok ? 0 : 1);
}
