// The installation's promises, checked on the YAML files themselves (the
// rendered tree is validated against the real API schemas on the local control
// plane in test/integration/knative-manifests.test.ts).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { LABEL_MANAGED_BY, MANAGED_BY } from '../../lib/decisions/workspace.js';
import { PING_EVENT_TYPE, toTrigger } from '../../lib/events/index.js';

const base = resolve(import.meta.dirname, '../../knative/base');
type Doc = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

function load(file: string): Doc[] {
  return parseAllDocuments(readFileSync(join(base, file), 'utf8')).map((d) => d.toJS() as Doc);
}
const byName = (docs: Doc[], name: string): Doc => {
  const doc = docs.find((d) => d.metadata?.name === name);
  if (!doc) throw new Error(`no ${name}`);
  return doc;
};

/** Role rules flattened to `group/resource:verb`, sorted, so they compare as sets. */
function permissions(role: Doc): string[] {
  const out: string[] = [];
  for (const rule of role.rules as Doc[]) {
    for (const group of rule.apiGroups as string[]) for (const resource of rule.resources as string[]) for (const verb of rule.verbs as string[]) out.push(`${group}/${resource}:${verb}`);
    expect(rule.resourceNames).toBeUndefined();
  }
  return out.sort();
}
const expand = (group: string, resource: string, verbs: string[]): string[] => verbs.map((v) => `${group}/${resource}:${v}`);

describe('RBAC permission sets (exactly what each function uses)', () => {
  const roles = load('rbac.yaml');

  it('assign: read Swarms, StatefulSets, Pods, list acknowledgement Leases; write ConfigMaps and Swarm status; resize StatefulSets (scale only); patch Pods (one annotation: assign-pod-policy.yaml); record Events', () => {
    expect(permissions(byName(roles, 'swarm-assign'))).toEqual(
      [
        ...expand('k8slab.info', 'swarms', ['get', 'list', 'watch']),
        ...expand('k8slab.info', 'swarms/status', ['update', 'patch']),
        ...expand('apps', 'statefulsets', ['get', 'list']),
        ...expand('apps', 'statefulsets/scale', ['get', 'update']),
        ...expand('apps', 'deployments', ['get']),
        ...expand('apps', 'deployments/scale', ['get', 'update']),
        ...expand('', 'pods', ['get', 'list', 'patch']),
        ...expand('coordination.k8s.io', 'leases', ['list']),
        ...expand('', 'configmaps', ['get', 'create', 'update', 'patch']),
        ...expand('', 'events', ['create', 'patch']),
        ...expand('events.k8s.io', 'events', ['create', 'patch']),
      ].sort(),
    );
  });

  it('restart: get Swarms, list and delete Pods, list acknowledgement Leases, read ConfigMaps and patch its intents on them, Events; never Swarm status (assign owns it)', () => {
    expect(permissions(byName(roles, 'swarm-restart'))).toEqual(
      [
        ...expand('k8slab.info', 'swarms', ['get', 'list']),
        ...expand('apps', 'statefulsets', ['get']),
        ...expand('', 'pods', ['get', 'list', 'delete']),
        ...expand('coordination.k8s.io', 'leases', ['list']),
        ...expand('', 'configmaps', ['get', 'patch']),
        ...expand('', 'events', ['create', 'patch']),
        ...expand('events.k8s.io', 'events', ['create', 'patch']),
      ].sort(),
    );
  });

  it('source: get/list/watch on exactly what the ApiServerSource watches', () => {
    const watched = (byName(load('apiserversource.yaml'), 'swarm').spec.resources as Doc[]).map((r) => r.kind);
    expect(watched).toEqual(['Swarm', 'StatefulSet', 'Deployment', 'Pod', 'Lease', 'ConfigMap']);
    expect(permissions(byName(roles, 'swarm-source'))).toEqual(
      [
        ...expand('k8slab.info', 'swarms', ['get', 'list', 'watch']),
        ...expand('apps', 'statefulsets', ['get', 'list', 'watch']),
        ...expand('apps', 'deployments', ['get', 'list', 'watch']),
        ...expand('', 'pods', ['get', 'list', 'watch']),
        ...expand('coordination.k8s.io', 'leases', ['get', 'list', 'watch']),
        ...expand('', 'configmaps', ['get', 'list', 'watch']),
      ].sort(),
    );
  });

  it('grants nothing at cluster scope: no ClusterRoleBinding anywhere in the tree', () => {
    for (const file of ['rbac.yaml', 'serviceaccounts.yaml', 'services.yaml', '../namespace-access/rolebindings.yaml']) {
      expect(load(file).filter((d) => d.kind === 'ClusterRoleBinding')).toEqual([]);
    }
    const bindings = load('../namespace-access/rolebindings.yaml');
    expect(bindings.map((b) => [b.kind, b.roleRef.name, b.subjects[0].name])).toEqual([
      ['RoleBinding', 'swarm-assign', 'swarm-assign'],
      ['RoleBinding', 'swarm-restart', 'swarm-restart'],
      ['RoleBinding', 'swarm-source', 'swarm-source'],
    ]);
  });
});

describe('Knative Services', () => {
  const services = load('services.yaml');

  for (const [name, fn] of [['swarm-assign', 'assign'], ['swarm-restart', 'restart']] as const) {
    it(`${name}: scales to zero with a ceiling, bounded concurrency, probes, limits, locked-down container`, () => {
      const template = byName(services, name).spec.template;
      const annotations = template.metadata.annotations;
      expect(annotations['autoscaling.knative.dev/min-scale']).toBe('0');
      expect(Number(annotations['autoscaling.knative.dev/max-scale'])).toBeGreaterThan(0);
      expect(template.spec.containerConcurrency).toBeGreaterThan(0);
      expect(template.spec.serviceAccountName).toBe(name);
      const [container] = template.spec.containers as Doc[];
      expect(container?.env).toContainEqual({ name: 'FUNCTION', value: fn });
      expect(container?.readinessProbe.httpGet.path).toBe('/readyz');
      expect(container?.livenessProbe.httpGet.path).toBe('/healthz');
      expect(Object.keys(container?.resources.requests).sort()).toEqual(['cpu', 'memory']);
      expect(Object.keys(container?.resources.limits).sort()).toEqual(['cpu', 'memory']);
      expect(container?.securityContext).toMatchObject({
        runAsNonRoot: true,
        readOnlyRootFilesystem: true,
        allowPrivilegeEscalation: false,
        capabilities: { drop: ['ALL'] },
      });
      expect(byName(services, name).metadata.labels['networking.knative.dev/visibility']).toBe('cluster-local');
    });
  }
});

describe('event routing', () => {
  const triggers = load('triggers.yaml');
  const dialects = new Set(['exact', 'prefix', 'suffix', 'all', 'any', 'not']);
  const checkDialects = (filter: Doc): void => {
    const keys = Object.keys(filter);
    expect(keys).toHaveLength(1);
    expect(dialects.has(keys[0] as string)).toBe(true);
    const [key] = keys as [string];
    if (key === 'all' || key === 'any') (filter[key] as Doc[]).forEach(checkDialects);
    else if (key === 'not') checkDialects(filter.not);
    else expect(Object.keys(filter[key])).toHaveLength(1);
  };

  it('uses only the exact/prefix/suffix/all/any/not dialects, one attribute per leaf', () => {
    for (const trigger of triggers) (trigger.spec.filters as Doc[]).forEach(checkDialects);
  });

  it('sends restart the assignment.changed reply, and retries with exponential backoff into a dead-letter sink', () => {
    expect(JSON.stringify(byName(triggers, 'swarm-restart').spec.filters)).toContain('"type":"info.k8slab.swarm.assignment.changed"');
    for (const trigger of triggers) {
      expect(trigger.spec.delivery).toMatchObject({ backoffPolicy: 'exponential', deadLetterSink: { ref: { kind: 'Service', name: 'swarm-dead-letter' } } });
      expect(trigger.spec.delivery.retry).toBeGreaterThan(0);
    }
  });

  it('watches only the ConfigMaps Swarm manages (the label every write sets)', () => {
    const configMap = (byName(load('apiserversource.yaml'), 'swarm').spec.resources as Doc[]).find((r) => r.kind === 'ConfigMap');
    expect(configMap?.selector).toEqual({ matchLabels: { [LABEL_MANAGED_BY]: MANAGED_BY } });
  });

  it('pings a resync every five minutes to the Broker (a minute keeps assign warm under Knative\'s default windows), its data naming the namespace to resync', () => {
    const ping = byName(load('pingsource.yaml'), 'swarm-resync-swarm');
    expect(ping).toMatchObject({ apiVersion: 'sources.knative.dev/v1', kind: 'PingSource', spec: { schedule: '*/5 * * * *', contentType: 'application/json' } });
    expect(ping.spec.sink.ref).toEqual({ apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'swarm' });
    expect(toTrigger({ type: PING_EVENT_TYPE, data: JSON.parse(ping.spec.data) })).toEqual({ source: 'ping', type: 'resync', namespace: 'swarm' });
    expect(load('kustomization.yaml')[0]?.resources).toContain('pingsource.yaml');
  });

  it('watches only Swarm worker pods', () => {
    const pod = (byName(load('apiserversource.yaml'), 'swarm').spec.resources as Doc[]).find((r) => r.kind === 'Pod');
    expect(pod?.selector).toEqual({ matchExpressions: [{ key: 'k8slab.info/swarm', operator: 'Exists' }] });
    for (const [file, kind] of [['statefulset.yaml', 'StatefulSet'], ['deployment.yaml', 'Deployment']]) {
      const sampleTemplate = parseAllDocuments(readFileSync(join(base, '../samples', file!), 'utf8'))
        .map((d) => d.toJS() as Doc)
        .find((d) => d.kind === kind)?.spec.template;
      expect(sampleTemplate.metadata.labels['k8slab.info/swarm']).toBe('swarm-worker');
    }
  });

  it('the Deployment sample drains: its worker may read only its Swarm\'s ConfigMap, and waits on it at SIGTERM within its grace period', () => {
    const docs = parseAllDocuments(readFileSync(join(base, '../samples/deployment.yaml'), 'utf8')).map((d) => d.toJS() as Doc);
    const role = docs.find((d) => d.kind === 'Role');
    expect(role?.rules).toContainEqual({ apiGroups: [''], resources: ['configmaps'], resourceNames: ['swarm-worker-config'], verbs: ['get'] });
    const pod = docs.find((d) => d.kind === 'Deployment')?.spec.template.spec;
    const env = Object.fromEntries((pod.containers[0].env as Doc[]).map((e) => [e.name, e.value ?? e.valueFrom?.fieldRef?.fieldPath]));
    expect(env).toMatchObject({ DRAIN_CONFIGMAP: 'swarm-worker-config', SWARM_POOL: "metadata.labels['k8slab.info/swarm']" });
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThan(10);
  });
});
