// Swarm's pieces from knative/ applied to a cluster with the pinned kubectl,
// for tests and benchmarks that run the functions themselves (host processes
// against the local control plane) rather than Swarm deployed on Knative
// (real-knative.ts, swarm-on-knative.ts):
//   - the CRD and the identities/permissions from knative/base;
//   - a namespace enabled as an admin would (knative/namespace-access);
//   - a ServiceAccount token per function, so RBAC is enforced as in a cluster.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { KubeConfig } from '@kubernetes/client-node';
import { binPath, repoRoot } from '../controlplane/cluster.js';

const run = promisify(execFile);
export const SYSTEM_NAMESPACE = 'swarm-system';
const knative = (...p: string[]) => join(repoRoot, 'knative', ...p);

export async function kubectl(kubeconfig: string, args: readonly string[], input?: string): Promise<string> {
  const child = run(binPath('kubectl'), ['--kubeconfig', kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
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
  await kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', knative('base', 'worker-lease-policy.yaml'), '-f', knative('base', 'assign-pod-policy.yaml')]);
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
