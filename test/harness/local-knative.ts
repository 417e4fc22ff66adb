// "Knative on a laptop": the pieces Knative runs for Swarm, assembled on the
// local control plane for `npm start` and the integration tests.
//   - the CRD and the identities/permissions from knative/ (applied with the pinned kubectl);
//   - a ServiceAccount token per function, so RBAC is enforced as in a cluster;
//   - the local broker (routes by knative/base/triggers.yaml);
//   - the function hosts (functions/server.ts), one or more per function;
//   - the real ApiServerSource receive adapter, configured from
//     knative/base/apiserversource.yaml, posting to the broker.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import express from 'express';
import { KubeConfig } from '@kubernetes/client-node';
import { parseAllDocuments } from 'yaml';
import { start } from '../../functions/server.js';
import { createLocalBroker, type Delivery, type LocalBroker } from '../../dev/broker/local-broker.js';
import { loadTriggers } from '../../dev/broker/triggers.js';
import { startResyncTimer, type ResyncTimer } from '../../dev/resync-timer.js';
import { startApiServerSourceAdapter, type RunningAdapter, type WatchedResource } from '../controlplane/adapter.js';
import { binPath, repoRoot } from '../controlplane/cluster.js';

type Started = Awaited<ReturnType<typeof start>>;
type StartExtras = NonNullable<Parameters<typeof start>[1]>;

const run = promisify(execFile);
export const SYSTEM_NAMESPACE = 'swarm-system';
const knative = (...p: string[]) => join(repoRoot, 'knative', ...p);

export async function kubectl(kubeconfig: string, args: string[], input?: string): Promise<string> {
  const child = run(binPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 16 * 1024 * 1024 });
  if (input !== undefined) {
    // A kubectl that fails fast closes stdin early: its error is the one to report, not EPIPE.
    child.child.stdin?.on('error', () => undefined);
    child.child.stdin?.end(input);
  }
  return (await child).stdout;
}

/** The CRD and the cluster-wide identities (namespace, ServiceAccounts, ClusterRoles) from knative/base. */
export async function installSwarm(kubeconfig: string): Promise<void> {
  // An earlier undeploy may still be tearing the namespace down: wait for it to go.
  const phase = await kubectl(kubeconfig, ['get', 'namespace', SYSTEM_NAMESPACE, '-o', 'jsonpath={.status.phase}', '--ignore-not-found']);
  if (phase.trim() === 'Terminating') {
    await kubectl(kubeconfig, ['wait', '--for=delete', `namespace/${SYSTEM_NAMESPACE}`, '--timeout=120s']);
  }
  await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', knative('base', 'swarm-crd.yaml')]);
  await kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/swarms.k8slab.info']);
  await kubectl(kubeconfig, ['apply', '-f', knative('base', 'namespace.yaml')]);
  await kubectl(kubeconfig, ['apply', '-n', SYSTEM_NAMESPACE, '-f', knative('base', 'serviceaccounts.yaml'), '-f', knative('base', 'rbac.yaml')]);
  // Server-side like the CRD: a later `npm run deploy` (server-side) then co-owns it instead of conflicting
  // over the atomic lists the API server defaults (matchConstraints, matchResources).
  await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', knative('base', 'worker-lease-policy.yaml')]);
}

/** Lets the functions and the source act in `namespace` (knative/namespace-access), as an admin would. */
export async function enableNamespace(kubeconfig: string, namespace: string): Promise<void> {
  await kubectl(kubeconfig, ['create', 'namespace', namespace]).catch((err: unknown) => {
    if (!String(err).includes('AlreadyExists')) throw err;
  });
  await kubectl(kubeconfig, ['label', 'namespace', namespace, '--overwrite', 'k8slab.info/swarm-enabled=true']);
  await kubectl(kubeconfig, ['apply', '-n', namespace, '-f', knative('namespace-access', 'rolebindings.yaml')]);
}

/** A kubeconfig that authenticates as a ServiceAccount (a TokenRequest token), written next to the admin one. */
export async function serviceAccountKubeconfig(adminKubeconfig: string, account: string, dir: string): Promise<string> {
  const token = (await kubectl(adminKubeconfig, ['create', 'token', account, '-n', SYSTEM_NAMESPACE, '--duration=24h'])).trim();
  const kc = new KubeConfig();
  kc.loadFromFile(adminKubeconfig);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error(`no current cluster in ${adminKubeconfig}`);
  const ca = cluster.caData ?? (cluster.caFile ? readFileSync(cluster.caFile).toString('base64') : undefined);
  const text = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: local`,
    `  cluster: {server: ${JSON.stringify(cluster.server)}${ca ? `, certificate-authority-data: ${ca}` : ''}}`,
    'users:',
    `- name: ${account}`,
    `  user: {token: ${JSON.stringify(token)}}`,
    'contexts:',
    `- name: ${account}`,
    `  context: {cluster: local, user: ${account}}`,
    `current-context: ${account}`,
    '',
  ].join('\n');
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `kubeconfig-${account}`);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

const PLURALS: Record<string, string> = { Swarm: 'swarms', StatefulSet: 'statefulsets', Deployment: 'deployments', Pod: 'pods', Lease: 'leases', ConfigMap: 'configmaps' };

/** The manifest's selectors as a label selector string: matchLabels and Exists are all it uses. */
function selectorString(sel: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string }> } | undefined): string {
  const expressions = (sel?.matchExpressions ?? []).map((e) => {
    if (e.operator !== 'Exists') throw new Error(`apiserversource.yaml: operator ${e.operator} is not supported by the local adapter`);
    return e.key;
  });
  return [...Object.entries(sel?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`), ...expressions].join(',');
}

/** The adapter's resources, read from the ApiServerSource manifest (what its controller would resolve). */
export function sourceResources(): WatchedResource[] {
  const doc = parseAllDocuments(readFileSync(knative('base', 'apiserversource.yaml'), 'utf8'))
    .map((d) => d.toJS() as { kind?: string; spec?: { resources?: Array<{ apiVersion: string; kind: string; selector?: { matchLabels?: Record<string, string>; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> } }> } })
    .find((d) => d?.kind === 'ApiServerSource');
  return (doc?.spec?.resources ?? []).map((r) => {
    const [group, version] = r.apiVersion.includes('/') ? (r.apiVersion.split('/') as [string, string]) : ['', r.apiVersion];
    const selector = selectorString(r.selector);
    const plural = PLURALS[r.kind];
    if (!plural) throw new Error(`no plural known for ${r.kind}`);
    return { group, version, resource: plural, ...(selector ? { labelSelector: selector } : {}) };
  });
}

export interface LocalKnativeOptions {
  adminKubeconfig: string;
  /** The namespace the source watches (must be enabled). */
  namespace: string;
  /** Where token kubeconfigs and logs go. */
  workDir: string;
  /** Instances per function (Knative may run several pods of a Service). Default 1. */
  instances?: number;
  /** Shrinks the Triggers' retry backoff (tests). */
  backoffScale?: number;
  onDelivery?: (d: Delivery) => void;
  /** Start the real ApiServerSource adapter (default true). */
  adapter?: boolean;
  /** Ping `namespace` with the resync event every this many ms, like the PingSource (dev/resync-timer.ts); default off. */
  resyncEveryMs?: number;
  hostExtras?: StartExtras;
}

export interface LocalKnative {
  brokerUrl: string;
  broker: LocalBroker;
  /** The PingSource's stand-in for `namespace` (pings only every resyncEveryMs; pingNow() at will). */
  resync: ResyncTimer;
  hosts: { assign: Started[]; restart: Started[] };
  adapter?: RunningAdapter;
  kubeconfigs: { assign: string; restart: string; source: string };
  stop(): Promise<void>;
}

export async function startLocalKnative(options: LocalKnativeOptions): Promise<LocalKnative> {
  const { adminKubeconfig, workDir } = options;
  const [assignKc, restartKc, sourceKc] = await Promise.all(
    ['swarm-assign', 'swarm-restart', 'swarm-source'].map((sa) => serviceAccountKubeconfig(adminKubeconfig, sa, workDir)),
  );
  const instances = options.instances ?? 1;
  const host = (fn: 'assign' | 'restart', kubeconfig: string) =>
    start({ ...process.env, FUNCTION: fn, PORT: '0', HOST: '127.0.0.1', KUBECONFIG: kubeconfig }, options.hostExtras ?? {});
  const hosts = {
    assign: await Promise.all(Array.from({ length: instances }, () => host('assign', assignKc!))),
    restart: await Promise.all(Array.from({ length: instances }, () => host('restart', restartKc!))),
  };
  const url = (s: Started) => `http://127.0.0.1:${s.port}/`;
  const broker = createLocalBroker({
    triggers: loadTriggers(),
    subscribers: { 'swarm-assign': hosts.assign.map(url), 'swarm-restart': hosts.restart.map(url) },
    ...(options.onDelivery ? { onDelivery: options.onDelivery } : {}),
    ...(options.backoffScale !== undefined ? { backoffScale: options.backoffScale } : {}),
  });
  const app = express();
  app.use('/', broker.router);
  const server: Server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  const brokerUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const resync = startResyncTimer(broker, [options.namespace], options.resyncEveryMs ?? 0);
  const adapter =
    options.adapter === false
      ? undefined
      : await startApiServerSourceAdapter({
          kubeconfig: sourceKc!,
          sink: brokerUrl,
          mode: 'Resource',
          resources: sourceResources(),
          namespace: options.namespace,
          logDir: workDir,
        });
  return {
    brokerUrl,
    broker,
    resync,
    hosts,
    ...(adapter ? { adapter } : {}),
    kubeconfigs: { assign: assignKc!, restart: restartKc!, source: sourceKc! },
    stop: async () => {
      resync.stop();
      await adapter?.stop();
      broker.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
      await Promise.all([...hosts.assign, ...hosts.restart].map((h) => h.close()));
    },
  };
}
