// A real, local Kubernetes cluster for development and integration tests:
// etcd, kube-apiserver, kube-controller-manager, kube-scheduler, a real node
// (containerd, kubelet, kube-proxy, CoreDNS as a pod) and kwok (tainted fake
// nodes whose pods become Running and Ready without running anything), built
// from pinned Go modules by build.ts.
//
// API:
//   ensureBuilt(onProgress?)            build the binaries once (cached)
//   startCluster(opts?) -> Cluster      start a cluster, resolve when nodes are Ready
//   importImages(archives, workDir?)    import OCI archives into the real node's containerd
//   stopCluster(workDir?)               stop the cluster recorded under workDir
//   clusterStatus(workDir?)             probe the cluster recorded under workDir
//   binPath(name)                       absolute path of a built binary (e.g. kubectl)
//   startApiServerSourceAdapter(opts)   the real Knative ApiServerSource adapter (adapter.ts)
import { spawn } from 'node:child_process';
import type { OutgoingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { hostname } from 'node:os';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { appendFile, mkdir, readFile, rename, rm, symlink, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { freePorts as freeLoopbackPorts } from './ports.js';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLUSTER_TOOLS, CONTROL_PLANE_TOOLS, binPath, ensureBuilt, isAlive, kwokStageFiles } from './build.js';
import type { ClusterState, ComponentInputs, ComponentSpec, Health, NodeInputs, Ports } from './components.js';
import {
  PORT_NAMES,
  apiServerUrl,
  fakeNode,
  fakeNodeName,
  layout,
  nodeSchedulable,
  renderKubeconfig,
  startStages,
} from './components.js';
import type { ClientIdentity } from './pki.js';
import { CLIENT_IDENTITIES, base64File, generatePki, nodeIdentities } from './pki.js';
import type { ImageArchive } from './images.js';
import { ensureNodeImages } from './images.js';
import {
  KUBELET_PORT,
  NODE_IP,
  REAL_NODE_LABEL,
  containerdConfig,
  coreDnsObjects,
  createPath,
  kubeProxyConfig,
  kubeletConfig,
  nodeLayout,
} from './node-config.js';
import { ensureHostPackages } from '../prereqs.js';
import { acquireNodeLock, cleanupNode, importImageArchives, nodeHeldBy, prepareHost, recordNodePids } from './node.js';

export { binPath, ensureBuilt } from './build.js';
export type { ImageArchive } from './images.js';
export { FAKE_NODE_SELECTOR, FAKE_NODE_TOLERATION } from './components.js';
export { REAL_NODE_LABEL } from './node-config.js';
export { startApiServerSourceAdapter } from './adapter.js';
export type { AdapterOptions, EventMode, RunningAdapter, WatchedResource } from './adapter.js';
export type { ClusterState } from './components.js';

/** The repository root (this file lives in test/controlplane). */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Work directory of the long-lived cluster of `npm run cluster:up`. */
export const defaultWorkDir = join(repoRoot, '.swarm');

/** `.swarm/bin/<tool>` links to the cached binaries, for `PATH=$PWD/.swarm/bin:$PATH` (cluster:up, npm start). */
export async function linkBinaries(): Promise<string> {
  const binaries = await ensureBuilt();
  const linkDir = join(defaultWorkDir, 'bin');
  await mkdir(linkDir, { recursive: true });
  for (const [name, path] of Object.entries(binaries)) {
    await rm(join(linkDir, name), { force: true });
    await symlink(path, join(linkDir, name));
  }
  return linkDir;
}

export interface StartOptions {
  /** Where kubeconfig, logs, data and state go; default `.swarm/`. */
  workDir?: string;
  /** Number of fake nodes (default 2). */
  nodes?: number;
  /** Remove workDir on stop (per-test-run clusters). */
  ephemeral?: boolean;
  /**
   * If set, a watchdog stops the cluster when this process exits, however it
   * exits (test runs pass their own pid so a killed runner leaves no orphans).
   */
  ownerPid?: number;
  onProgress?: (line: string) => void;
  /** How long to wait for the cluster to become usable (default 180 s). */
  readyTimeoutMs?: number;
  /**
   * Run a real node (containerd, kubelet, kube-proxy, CoreDNS): default true
   * unless SWARM_REAL_NODE=0. Needs root; one per machine (others wait).
   */
  realNode?: boolean;
  /** The kubelet's `syncFrequency` (e.g. '10s'); default the kubelet's own (1m). */
  syncFrequency?: string;
  /** How long to wait for another cluster's real node to be released (default 10 min). */
  nodeLockTimeoutMs?: number;
  /**
   * Called once this cluster holds the real node, before it changes anything
   * on the host (e.g. to snapshot the machine for a before/after check).
   */
  onNodeLocked?: () => void;
  /** Aborts the start while it waits for the real node (e.g. Ctrl-C in npm start). */
  signal?: AbortSignal;
}

export interface Cluster {
  readonly kubeconfigPath: string;
  readonly server: string;
  readonly workDir: string;
  /** The real node's name, if the cluster has one. */
  readonly realNode?: string;
  /** Imports OCI image archives into the real node's containerd (for `imagePullPolicy: Never` pods). */
  importImages(archives: readonly ImageArchive[]): Promise<void>;
  stop(): Promise<void>;
}

const wantsRealNode = (options: StartOptions): boolean => options.realNode ?? process.env.SWARM_REAL_NODE !== '0';

export async function startCluster(options: StartOptions = {}): Promise<Cluster> {
  const onProgress = options.onProgress ?? ((line: string) => process.stderr.write(`[controlplane] ${line}\n`));
  const started = Date.now();
  const realNode = wantsRealNode(options);
  if (!ensureHostPackages()) throw new Error('the local cluster needs the Debian packages listed above');
  if (realNode && process.getuid?.() !== 0) {
    throw new Error('the real node (containerd, kubelet, CNI bridge, iptables) needs root; start without it with SWARM_REAL_NODE=0');
  }
  await ensureBuilt(onProgress, realNode ? CLUSTER_TOOLS : CONTROL_PLANE_TOOLS);
  const images = realNode ? await ensureNodeImages(onProgress) : undefined;
  const l = layout(resolve(options.workDir ?? defaultWorkDir));
  const existing = await readState(l.workDir);
  if (existing && existing.processes.some((p) => isAlive(p.pid))) {
    throw new Error(`a cluster is already running in ${l.workDir} (run \`npm run cluster:down\` first)`);
  }
  const nodeName = realNode ? hostname().toLowerCase() : undefined;
  const n = nodeLayout();
  if (realNode) {
    await acquireNodeLock(l.workDir, onProgress, options.nodeLockTimeoutMs ?? 10 * 60_000, options.signal);
    options.onNodeLocked?.();
    try {
      await prepareHost(n);
    } catch (error) {
      await cleanupNode(onProgress, n);
      throw error;
    }
  }
  // Start-up is timed from here: waiting for another cluster's real node is not start-up time.
  const upSince = Date.now();
  // A fresh cluster every time: old etcd data would carry objects from a
  // previous run with certificates that no longer exist.
  await rm(l.dataDir, { recursive: true, force: true });
  await mkdir(l.logDir, { recursive: true });
  await mkdir(l.etcdDir, { recursive: true, mode: 0o700 });

  const pki = await generatePki(l.pkiDir, nodeName ? { name: nodeName, ip: NODE_IP } : undefined);
  const ports = await freePorts();
  const apiServerHost = realNode ? NODE_IP : '127.0.0.1';
  const server = apiServerUrl(ports, apiServerHost);
  const caData = await base64File(pki.caCert);
  const writeIdentityKubeconfig = async (identity: ClientIdentity, path: string) => {
    const { cert, key } = pki.cert(identity);
    await writeFile(
      path,
      renderKubeconfig({ server, user: identity.user, caData, certData: await base64File(cert), keyData: await base64File(key) }),
      { mode: 0o600 },
    );
  };
  const kubeconfigs = {
    controllerManager: join(l.dataDir, 'kube-controller-manager.kubeconfig'),
    scheduler: join(l.dataDir, 'kube-scheduler.kubeconfig'),
    kwok: l.kubeconfig,
  };
  await writeIdentityKubeconfig(CLIENT_IDENTITIES.admin, l.kubeconfig);
  await writeIdentityKubeconfig(CLIENT_IDENTITIES.controllerManager, kubeconfigs.controllerManager);
  await writeIdentityKubeconfig(CLIENT_IDENTITIES.scheduler, kubeconfigs.scheduler);

  let node: NodeInputs | undefined;
  if (nodeName && images) {
    const ids = nodeIdentities(nodeName);
    const kubeletKubeconfig = join(l.dataDir, 'kubelet.kubeconfig');
    const kubeProxyKubeconfig = join(l.dataDir, 'kube-proxy.kubeconfig');
    await writeIdentityKubeconfig(ids.kubelet, kubeletKubeconfig);
    await writeIdentityKubeconfig(ids.kubeProxy, kubeProxyKubeconfig);
    await writeFile(n.containerdConfig, containerdConfig(n, images.pause.name));
    await writeFile(
      n.kubeletConfig,
      kubeletConfig({
        layout: n,
        caCert: pki.caCert,
        servingCert: pki.kubeletServing.cert,
        servingKey: pki.kubeletServing.key,
        healthzPort: ports.kubeletHealthz,
        ...(options.syncFrequency ? { syncFrequency: options.syncFrequency } : {}),
      }),
    );
    await writeFile(
      n.kubeProxyConfig,
      kubeProxyConfig({
        kubeconfig: kubeProxyKubeconfig,
        nodeName,
        healthzPort: ports.kubeProxyHealthz,
        metricsPort: ports.kubeProxyMetrics,
      }),
    );
    node = {
      nodeName,
      nodeIp: NODE_IP,
      kubeletPort: KUBELET_PORT,
      containerdConfig: n.containerdConfig,
      containerdSocket: n.containerdSocket,
      kubeletConfig: n.kubeletConfig,
      kubeletRoot: n.kubeletRoot,
      kubeProxyConfig: n.kubeProxyConfig,
      kubeletKubeconfig,
      kubeletClient: pki.cert(ids.apiServerKubeletClient),
      labels: { [REAL_NODE_LABEL]: 'true' },
    };
  }

  const inputs: ComponentInputs = {
    ports,
    layout: l,
    bin: (name) => binPath(name as Parameters<typeof binPath>[0]),
    kwokStageFiles: kwokStageFiles(),
    pki,
    kubeconfigs,
    apiServerHost,
    ...(node ? { node } : {}),
  };
  const admin = { ca: await readFile(pki.caCert), ...(await readPair(pki.cert(CLIENT_IDENTITIES.admin))) };

  const processes: { name: string; pid: number; health: Health }[] = [];
  let watchdogPid: number | undefined;
  const state = (): ClusterState => ({
    ...(watchdogPid ? { watchdogPid } : {}),
    workDir: l.workDir,
    kubeconfigPath: l.kubeconfig,
    server,
    ports,
    processes,
    startedAt: new Date(started).toISOString(),
    ephemeral: options.ephemeral ?? false,
    ...(nodeName ? { realNode: nodeName } : {}),
  });
  const deadline = upSince + (options.readyTimeoutMs ?? 180_000);
  const timings: string[] = [`certificates ${((Date.now() - upSince) / 1000).toFixed(1)}s`];
  const elapsed = (): string => `${((Date.now() - upSince) / 1000).toFixed(1)}s`;
  // The watchdog reads the process groups from a file we append to as we
  // launch, so it covers a runner killed half-way through start-up too.
  const groupsFile = join(l.dataDir, 'process-groups');
  await writeFile(groupsFile, '');
  if (options.ownerPid) watchdogPid = startWatchdog(options.ownerPid, groupsFile, state());
  try {
    for (const stage of startStages(inputs)) {
      if (images && stage.some((spec) => spec.name === 'kubelet')) {
        await importImageArchives([images.pause, images.coredns], onProgress, n);
        timings.push(`images imported ${elapsed()}`);
      }
      const nodeParts = stage.filter((spec) => ['containerd', 'kubelet', 'kube-proxy'].includes(spec.name));
      if (nodeParts.length) onProgress(`real node ${nodeName}: starting ${nodeParts.map((spec) => spec.name).join(', ')}`);
      for (const spec of stage) {
        const pid = launch(spec, l.logDir);
        await appendFile(groupsFile, `${pid}\n`);
        processes.push({ name: spec.name, pid, health: spec.health });
        // Record as we go, so `cluster:down` can clean up even a half-started cluster.
        await writeState(l.stateFile, state());
      }
      await Promise.all(stage.map((spec) => waitHealthy(spec, processes, admin, deadline, l.logDir)));
      timings.push(`${stage.map((spec) => spec.name).join('+')} ${elapsed()}`);
      if (nodeName) await recordNodePids(processes.map((p) => p.pid));
    }
    const nodeCount = options.nodes ?? 2;
    for (let i = 0; i < nodeCount; i++) await kubeRequest(server, admin, 'POST', '/api/v1/nodes', fakeNode(i));
    await waitFor('nodes Ready', deadline, async () => {
      const list = (await kubeRequest(server, admin, 'GET', '/api/v1/nodes')) as {
        items: (Parameters<typeof nodeSchedulable>[0] & { metadata: { name: string } })[];
      };
      const ready = list.items.filter(nodeSchedulable);
      return ready.length >= nodeCount + (nodeName ? 1 : 0) && (!nodeName || ready.some((node) => node.metadata.name === nodeName));
    });
    timings.push(`nodes Ready ${elapsed()}`);
    if (images) {
      onProgress(`real node ${nodeName} Ready; starting CoreDNS on it`);
      for (const object of coreDnsObjects(images.coredns.name)) {
        await kubeRequest(server, admin, 'POST', createPath(object as Parameters<typeof createPath>[0]), object);
      }
      await waitFor('CoreDNS Ready', deadline, async () => {
        const deployment = (await kubeRequest(server, admin, 'GET', '/apis/apps/v1/namespaces/kube-system/deployments/coredns')) as {
          status?: { readyReplicas?: number };
        };
        return (deployment.status?.readyReplicas ?? 0) >= 1;
      });
      timings.push(`CoreDNS Ready ${elapsed()}`);
    }
    // Pods need their namespace's default ServiceAccount: proves the
    // controller manager is acting, not just alive.
    await waitFor('default ServiceAccount', deadline, async () =>
      Boolean(await kubeRequest(server, admin, 'GET', '/api/v1/namespaces/default/serviceaccounts/default').catch(() => false)),
    );
  } catch (error) {
    await stopProcesses(state());
    if (nodeName) await cleanupNode(onProgress, n);
    throw error;
  }
  onProgress(
    `cluster up in ${elapsed()}: ${server} (kubeconfig ${l.kubeconfig}, ${nodeName ? `real node ${nodeName}, ` : ''}${fakeNodeName(0)}…) [healthy at: ${timings.join(', ')}]`,
  );
  return {
    kubeconfigPath: l.kubeconfig,
    server,
    workDir: l.workDir,
    ...(nodeName ? { realNode: nodeName } : {}),
    importImages: (archives) => importImages(archives, l.workDir, onProgress),
    stop: async () => {
      await stopCluster(l.workDir);
    },
  };
}

/** Imports OCI image archives (e.g. built by buildah) into the real node of the cluster recorded under workDir. */
export async function importImages(
  archives: readonly ImageArchive[],
  workDir: string = defaultWorkDir,
  onProgress: (line: string) => void = (line) => process.stderr.write(`[controlplane] ${line}\n`),
): Promise<void> {
  const state = await readState(workDir);
  if (!state?.realNode) throw new Error(`the cluster in ${workDir} has no real node to import images into`);
  await importImageArchives(archives, onProgress);
}

async function readPair(pair: { cert: string; key: string }): Promise<{ cert: Buffer; key: Buffer }> {
  return { cert: await readFile(pair.cert), key: await readFile(pair.key) };
}

/** Starts one component in its own process group, output appended to its log file. */
function launch(spec: ComponentSpec, logDir: string): number {
  const log = openSync(join(logDir, `${spec.name}.log`), 'a');
  try {
    const child = spawn(spec.command, spec.args, { detached: true, stdio: ['ignore', log, log] });
    child.unref();
    if (!child.pid) throw new Error(`could not start ${spec.name}`);
    return child.pid;
  } finally {
    closeSync(log);
  }
}

/**
 * A detached shell that outlives a crashed owner just long enough to stop
 * the cluster: polls the owner pid, then terminates the process groups.
 */
function startWatchdog(ownerPid: number, groupsFile: string, state: ClusterState): number | undefined {
  const cleanup = state.ephemeral ? `rm -rf -- ${shellQuote(state.workDir)}` : ':';
  const signalAll = (signal: string) =>
    `for g in $(cat ${shellQuote(groupsFile)} 2>/dev/null); do kill -${signal} -- -$g 2>/dev/null; done`;
  // The real node leaves more than processes (mounts, bridge, iptables, sysctls):
  // the same cleanup as `cluster:down`, run through tsx.
  const nodeCleanup = state.realNode
    ? [process.execPath, join(repoRoot, 'node_modules', 'tsx', 'dist', 'cli.mjs'), join(repoRoot, 'test', 'controlplane', 'cli.ts'), 'node-cleanup', state.workDir]
        .map(shellQuote)
        .join(' ') + ` >> ${shellQuote(join(state.workDir, 'logs', 'node-cleanup.log'))} 2>&1`
    : ':';
  const script = [
    `while kill -0 ${ownerPid} 2>/dev/null; do sleep 1; done`,
    signalAll('TERM'),
    'sleep 5',
    signalAll('KILL'),
    nodeCleanup,
    cleanup,
  ].join('; ');
  const child = spawn('bash', ['-c', script], { detached: true, stdio: 'ignore' });
  child.unref();
  return child.pid;
}

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

async function waitHealthy(
  spec: ComponentSpec,
  processes: readonly { name: string; pid: number }[],
  admin: { ca: Buffer; cert: Buffer; key: Buffer },
  deadline: number,
  logDir: string,
): Promise<void> {
  const pid = processes.find((p) => p.name === spec.name)?.pid ?? 0;
  const lastLines = async () => (await readFile(join(logDir, `${spec.name}.log`), 'utf8').catch(() => '')).split('\n').slice(-20).join('\n');
  try {
    await waitFor(`${spec.name} healthy`, deadline, async () => {
      if (!isAlive(pid) || isZombieOrGone(pid)) throw new Error(`${spec.name} exited during start-up; last log lines:\n${await lastLines()}`);
      return probe(spec.health, admin);
    });
  } catch (error) {
    // A component that runs but never turns healthy: its log says why (the work dir may go with the cluster).
    if (error instanceof Error && error.message.startsWith('timed out')) throw new Error(`${error.message}; last log lines of ${spec.name}:\n${await lastLines()}`);
    throw error;
  }
}

/** A detached child we never wait on lingers as a zombie after it exits. */
function isZombieOrGone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return /^\d+ \(.*\) Z/.test(stat);
  } catch {
    return !isAlive(pid);
  }
}

async function waitFor(what: string, deadline: number, check: () => Promise<boolean>): Promise<void> {
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return;
    } catch (error) {
      if (error instanceof Error && error.message.includes('exited during start-up')) throw error;
      lastError = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${lastError ? `: ${String(lastError)}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

/** True when the component answers its health endpoint with 200. */
export function probe(health: Health, admin?: { ca: Buffer; cert: Buffer; key: Buffer }): Promise<boolean> {
  if (health.kind === 'unix') {
    return new Promise((resolve) => {
      const socket = connect(health.path, () => {
        socket.destroy();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
  }
  return new Promise((resolve) => {
    const url = new URL(health.url);
    const options = {
      timeout: 2000,
      ...(health.kind === 'https-insecure' ? { rejectUnauthorized: false } : {}),
      ...(health.kind === 'https-admin' && admin ? { ca: admin.ca, cert: admin.cert, key: admin.key } : {}),
    };
    const req = (health.kind === 'http' ? httpRequest : httpsRequest)(url, options, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(false));
    req.end();
  });
}

/** A minimal JSON client for start-up chores, authenticated as admin. */
function kubeRequest(
  server: string,
  admin: { ca: Buffer; cert: Buffer; key: Buffer },
  method: string,
  path: string,
  body?: object,
): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const payload = body ? JSON.stringify(body) : undefined;
    const headers: OutgoingHttpHeaders = { accept: 'application/json' };
    if (payload) headers['content-type'] = 'application/json';
    const req = httpsRequest(
      new URL(path, server),
      { method, ca: admin.ca, cert: admin.cert, key: admin.key, headers, timeout: 10_000 },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve(text ? JSON.parse(text) : undefined);
          else reject(new Error(`${method} ${path}: ${status} ${text.slice(0, 500)}`));
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: timeout`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Distinct free loopback ports, one per component. */
async function freePorts(): Promise<Ports> {
  const ports = await freeLoopbackPorts(PORT_NAMES.length);
  return Object.fromEntries(PORT_NAMES.map((name, i) => [name, ports[i]])) as unknown as Ports;
}

async function writeState(path: string, state: ClusterState): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(state, null, 2) + '\n');
  await rename(`${path}.tmp`, path);
}

export async function readState(workDir: string = defaultWorkDir): Promise<ClusterState | undefined> {
  const path = layout(resolve(workDir)).stateFile;
  if (!existsSync(path)) return undefined;
  return JSON.parse(await readFile(path, 'utf8')) as ClusterState;
}

/** Stops the cluster recorded under workDir (no-op if none). Returns what it stopped. */
export async function stopCluster(workDir: string = defaultWorkDir): Promise<string[]> {
  const state = await readState(workDir);
  if (!state) return [];
  // An orderly stop needs no watchdog.
  if (state.watchdogPid) signalGroup(state.watchdogPid, 'SIGKILL');
  const stopped = await stopProcesses(state);
  if (state.realNode && nodeHeldBy(state.workDir)) await cleanupNode(() => {});
  if (state.ephemeral) await rm(state.workDir, { recursive: true, force: true });
  else await rm(layout(state.workDir).stateFile, { force: true });
  return stopped;
}

/** SIGTERM each process group (newest first), then SIGKILL whatever is left after 10 s. */
async function stopProcesses(state: ClusterState): Promise<string[]> {
  const running = [...state.processes].reverse().filter((p) => isAlive(p.pid));
  for (const p of running) signalGroup(p.pid, 'SIGTERM');
  const deadline = Date.now() + 10_000;
  while (running.some((p) => isAlive(p.pid) && !isZombieOrGone(p.pid)) && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  for (const p of running) if (isAlive(p.pid)) signalGroup(p.pid, 'SIGKILL');
  return running.map((p) => p.name);
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}

export interface ComponentStatus {
  readonly name: string;
  readonly pid: number;
  readonly running: boolean;
  readonly healthy: boolean;
}

/** Probes every recorded component; undefined when no cluster is recorded. */
export async function clusterStatus(
  workDir: string = defaultWorkDir,
): Promise<{ state: ClusterState; components: ComponentStatus[] } | undefined> {
  const state = await readState(workDir);
  if (!state) return undefined;
  const pki = join(layout(state.workDir).pkiDir);
  const admin = {
    ca: await readFile(join(pki, 'ca.crt')).catch(() => Buffer.alloc(0)),
    cert: await readFile(join(pki, 'admin.crt')).catch(() => Buffer.alloc(0)),
    key: await readFile(join(pki, 'admin.key')).catch(() => Buffer.alloc(0)),
  };
  const components = await Promise.all(
    state.processes.map(async (p) => {
      const running = isAlive(p.pid) && !isZombieOrGone(p.pid);
      return { name: p.name, pid: p.pid, running, healthy: running && (await probe(p.health, admin)) };
    }),
  );
  return { state, components };
}

/** A cluster is reusable when every component is running and healthy. */
export async function healthyCluster(workDir: string = defaultWorkDir): Promise<ClusterState | undefined> {
  const status = await clusterStatus(workDir);
  if (!status || status.components.length === 0) return undefined;
  return status.components.every((c) => c.healthy) ? status.state : undefined;
}
