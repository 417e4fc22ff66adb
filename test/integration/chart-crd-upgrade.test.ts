// The chart's CRD upgrade hook (charts/swarm/files/apply-crd.mjs) against the
// real API server, with the hook's own identity: its ServiceAccount,
// ClusterRole and binding as `helm template` renders them, a token for that
// account, the script run by Node as the hook's pod runs it (paths given by
// env). It applies the CRD server-side and waits for Established; the
// ClusterRole lets it touch nothing but that CRD. The CRD starts as an older
// chart installed it (one schema field fewer): the field is served after.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { ensureBuilt } from '../controlplane/build.js';

const repo = resolve(import.meta.dirname, '../..');
const kubectlBin = inject('kubectl');
const kubeconfig = inject('kubeconfig');
const NS = `crd-upgrade-${process.pid}`;
const dir = mkdtempSync(join(tmpdir(), 'swarm-crd-upgrade-'));
const kubectl = (args: string[], input?: string): string =>
  execFileSync(kubectlBin, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', ...(input === undefined ? {} : { input }) });

afterAll(() => {
  // Whatever happened, the cluster serves the current CRD again (later files create Swarms with every field).
  spawnSync(kubectlBin, ['--kubeconfig', kubeconfig, 'apply', '--server-side', '--force-conflicts', '--field-manager=swarm-test', '-f', join(repo, 'charts/swarm/crds/swarm-crd.yaml')]);
  spawnSync(kubectlBin, ['--kubeconfig', kubeconfig, 'delete', 'namespace', NS, '--wait=false', '--ignore-not-found']);
  spawnSync(kubectlBin, ['--kubeconfig', kubeconfig, 'delete', 'clusterrole,clusterrolebinding', 'swarm-crd-upgrade', '--ignore-not-found']);
  rmSync(dir, { recursive: true, force: true });
});

/** Every CEL rule of a schema, wherever it is. */
function celRules(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(celRules);
  if (node === null || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) =>
    key === 'x-kubernetes-validations' ? (value as { rule: string }[]).map((r) => r.rule) : celRules(value),
  );
}

describe('the chart upgrades the CRD', () => {
  it('apply-crd.mjs, as the hook account, applies crds/swarm-crd.yaml and waits until Established', { timeout: 600_000 }, async () => {
    const helm = (await ensureBuilt((line) => process.stderr.write(`[tools] ${line}\n`), ['helm'])).helm!;
    const hook = execFileSync(helm, ['template', 'swarm', join(repo, 'charts/swarm'), '-n', NS, '--show-only', 'templates/crd-upgrade-hook.yaml'], { encoding: 'utf8' });
    const identity = parseAllDocuments(hook)
      .map((d) => d.toJS() as { kind: string })
      .filter((d) => ['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding'].includes(d.kind));
    expect(identity.map((d) => d.kind)).toEqual(['ServiceAccount', 'ClusterRole', 'ClusterRoleBinding']);
    kubectl(['create', 'namespace', NS]);
    kubectl(['apply', '--server-side', '-f', '-'], identity.map((d) => `---\n${stringify(d)}`).join(''));

    // The CRD as an older chart installed it (helm installs crds/ with create): one schema field fewer.
    const chartCrd = readFileSync(join(repo, 'charts/swarm/crds/swarm-crd.yaml'), 'utf8');
    const older = parse(chartCrd) as { spec: { versions: { schema: { openAPIV3Schema: { properties: { spec: { properties: Record<string, unknown>; required?: string[] } } } } }[] } };
    const specSchema = older.spec.versions[0]!.schema.openAPIV3Schema.properties.spec;
    // A field no validation rule names and none requires: the older schema is valid without it.
    const rules = JSON.stringify(celRules(older));
    const field = Object.keys(specSchema.properties).find((name) => !rules.includes(name) && !(specSchema.required ?? []).includes(name));
    expect(field).toBeDefined();
    delete specSchema.properties[field!];
    kubectl(['apply', '--server-side', '--force-conflicts', '--field-manager=helm', '-f', '-'], stringify(older));
    const served = () => (JSON.parse(kubectl(['get', 'crd', 'swarms.k8slab.info', '-o', 'json'])) as typeof older).spec.versions[0]!.schema.openAPIV3Schema.properties.spec.properties;
    expect(Object.keys(served())).not.toContain(field);

    // The pod's service account directory: a token for the hook's account and the cluster's CA.
    const config = parse(readFileSync(kubeconfig, 'utf8')) as { clusters: { cluster: { server: string; 'certificate-authority-data': string } }[] };
    const { server, 'certificate-authority-data': ca } = config.clusters[0]!.cluster;
    writeFileSync(join(dir, 'token'), kubectl(['-n', NS, 'create', 'token', 'swarm-crd-upgrade', '--duration=10m']).trim());
    writeFileSync(join(dir, 'ca.crt'), Buffer.from(ca, 'base64'));
    const url = new URL(server);
    const env = {
      ...process.env,
      KUBERNETES_SERVICE_HOST: url.hostname,
      KUBERNETES_SERVICE_PORT: url.port || '443',
      NODE_EXTRA_CA_CERTS: join(dir, 'ca.crt'),
      SWARM_ACCOUNT_DIR: dir,
      SWARM_CRD_FILE: join(repo, 'charts/swarm/crds/swarm-crd.yaml'),
    };
    const run = spawnSync(process.execPath, [join(repo, 'charts/swarm/files/apply-crd.mjs')], { env, encoding: 'utf8', timeout: 120_000 });
    expect(run.stderr).toBe('');
    expect(run.stdout).toContain('applied CRD swarms.k8slab.info');
    expect(run.stdout).toContain('CRD swarms.k8slab.info is Established');
    expect(run.status).toBe(0);
    expect(Object.keys(served()), 'the field the chart adds is served after the hook').toContain(field);
    const managers = JSON.parse(kubectl(['get', 'crd', 'swarms.k8slab.info', '--show-managed-fields', '-o', 'json'])) as { metadata: { managedFields: { manager: string }[] } };
    expect(managers.metadata.managedFields.map((m) => m.manager)).toContain('swarm-chart');

    // The account may touch that CRD only.
    const other = spawnSync(kubectlBin, ['--kubeconfig', kubeconfig, 'auth', 'can-i', 'patch', 'customresourcedefinitions/brokers.eventing.knative.dev', `--as=system:serviceaccount:${NS}:swarm-crd-upgrade`], { encoding: 'utf8' });
    expect(other.stdout.trim()).toBe('no');
  });
});
