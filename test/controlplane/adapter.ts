// The real Knative ApiServerSource receive adapter
// (knative.dev/eventing/cmd/apiserver_receive_adapter, built from its pinned
// Go module) run as a local process against a local cluster: it watches the
// listed resources and POSTs CloudEvents to `sink`, exactly as it does when
// the ApiServerSource controller runs it in a cluster.
import { spawn } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { freePort } from './ports.js';
import { join } from 'node:path';
import { binPath, ensureBuilt, isAlive } from './build.js';

export type EventMode = 'Resource' | 'Reference';

/** A watched resource, as ApiServerSource's `spec.resources[]` after discovery. */
export interface WatchedResource {
  readonly group: string;
  readonly version: string;
  /** Plural resource name, e.g. `statefulsets`. */
  readonly resource: string;
  readonly labelSelector?: string;
}

export interface AdapterOptions {
  readonly kubeconfig: string;
  /** Where CloudEvents are POSTed (K_SINK). */
  readonly sink: string;
  readonly mode: EventMode;
  readonly resources: readonly WatchedResource[];
  /** Namespace watched, and the adapter's own namespace (NAMESPACE). */
  readonly namespace: string;
  /** The ApiServerSource's name (NAME); default `swarm-local`. */
  readonly name?: string;
  /** Directory for the adapter's log file; default: the system temp dir. */
  readonly logDir?: string;
}

export interface RunningAdapter {
  readonly pid: number;
  readonly logFile: string;
  stop(): Promise<void>;
}

/**
 * The adapter's K_SOURCE_CONFIG: the JSON the ApiServerSource controller
 * marshals from the source's spec (Go field names for the GVR).
 */
export function sourceConfig(options: Pick<AdapterOptions, 'mode' | 'resources' | 'namespace'>): string {
  return JSON.stringify({
    namespaces: [options.namespace],
    allNamespaces: false,
    resources: options.resources.map((r) => ({
      gvr: { Group: r.group, Version: r.version, Resource: r.resource },
      ...(r.labelSelector ? { selector: r.labelSelector } : {}),
    })),
    mode: options.mode,
  });
}

/** Environment of the adapter process, as the ApiServerSource controller would set it. */
export function adapterEnv(options: AdapterOptions, profilingPort: number): Record<string, string> {
  return {
    KUBECONFIG: options.kubeconfig,
    K_SINK: options.sink,
    K_SOURCE_CONFIG: sourceConfig(options),
    NAMESPACE: options.namespace,
    NAME: options.name ?? 'swarm-local',
    K_LOGGING_CONFIG: JSON.stringify({ 'zap-logger-config': JSON.stringify({ level: 'info', encoding: 'json' }) }),
    K_OBSERVABILITY_CONFIG: '{}',
    // The adapter's pprof server binds this port; a free one avoids clashes.
    PROFILING_PORT: String(profilingPort),
  };
}

/**
 * Builds the adapter if needed, starts it, and resolves once it is running.
 * The adapter needs a moment to list and watch; callers wait for the first
 * event they expect rather than for a readiness signal.
 */
export async function startApiServerSourceAdapter(options: AdapterOptions): Promise<RunningAdapter> {
  await ensureBuilt(undefined, ['knative']);
  const logDir = options.logDir ?? join(process.env.TMPDIR ?? '/tmp', 'swarm-adapter-logs');
  mkdirSync(logDir, { recursive: true });
  const logFile = join(logDir, `apiserver_receive_adapter-${options.mode.toLowerCase()}-${process.pid}.log`);
  const log = openSync(logFile, 'a');
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp', ...adapterEnv(options, await freePort()) };
  let pid: number | undefined;
  try {
    // One local replica: no leader election. Upstream's health-probe server
    // has a fixed port (8080); if that is taken it fails alone, and the
    // adapter runs on regardless.
    const child = spawn(binPath('apiserver_receive_adapter'), ['--disable-ha'], {
      env,
      detached: true,
      stdio: ['ignore', log, log],
    });
    child.unref();
    pid = child.pid;
  } finally {
    closeSync(log);
  }
  if (!pid) throw new Error('could not start apiserver_receive_adapter');
  const adapterPid = pid;
  // If this process dies without calling stop(), the adapter goes with it.
  const watchdog = spawn(
    'bash',
    ['-c', `while kill -0 ${process.pid} 2>/dev/null; do sleep 1; done; kill -TERM -- -${adapterPid}; sleep 3; kill -KILL -- -${adapterPid}`],
    { detached: true, stdio: 'ignore' },
  );
  watchdog.unref();
  await new Promise((resolve) => setTimeout(resolve, 200));
  if (!isAlive(adapterPid)) throw new Error(`apiserver_receive_adapter exited at once; see ${logFile}`);
  return {
    pid: adapterPid,
    logFile,
    stop: async () => {
      if (watchdog.pid) signal(watchdog.pid, 'SIGKILL');
      signal(adapterPid, 'SIGTERM');
      for (let i = 0; i < 50 && isAlive(adapterPid); i++) await new Promise((resolve) => setTimeout(resolve, 100));
      signal(adapterPid, 'SIGKILL');
    },
  };
}

function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(-pid, name);
  } catch {
    // Already gone.
  }
}

