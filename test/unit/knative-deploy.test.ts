import { describe, expect, it } from 'vitest';
import {
  bindNamespace,
  overrideImages,
  parseArgs,
  planSteps,
  repositoryOf,
  resyncPingFor,
  splitDocuments,
  UsageError,
  webhookUnavailable,
  type Manifest,
} from '../../bin/deploy-plan.js';

const installation: Manifest[] = splitDocuments(`
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: swarms.k8slab.info}
---
apiVersion: v1
kind: Namespace
metadata: {name: swarm-system}
---
apiVersion: serving.knative.dev/v1
kind: Service
metadata: {name: swarm-assign, namespace: swarm-system}
spec:
  template:
    spec:
      containers:
        - name: function
          image: ghcr.io/k8slab/swarm:0.1.0
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: swarm-worker, namespace: swarm}
spec:
  template:
    spec:
      initContainers: [{name: init, image: busybox:1.36}]
      containers: [{name: worker, image: localhost:5000/swarm-worker:dev}]
`);
const bindings = splitDocuments(`
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: swarm-assign}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: swarm-assign}
subjects: [{kind: ServiceAccount, name: swarm-assign, namespace: swarm-system}]
`);
const crd = installation.slice(0, 1);

describe('parseArgs', () => {
  it('reads the cluster, overlay, images and namespaces', () => {
    const { command, options } = parseArgs(
      ['deploy', '--kubeconfig', '/k', '--context=prod', '--overlay', 'knative/overlays/prod', '--image', 'r/swarm@sha256:ab', '--watch-namespace', 'a', '--watch-namespace=b'],
      { KUBECTL: '/opt/kubectl' },
    );
    expect(command).toBe('deploy');
    expect(options).toMatchObject({ kubectl: '/opt/kubectl', kubeconfig: '/k', context: 'prod', overlay: 'knative/overlays/prod', image: 'r/swarm@sha256:ab', watchNamespaces: ['a', 'b'] });
  });

  it('rejects unknown commands, options and missing values', () => {
    expect(() => parseArgs(['destroy'])).toThrow(UsageError);
    expect(() => parseArgs(['deploy', '--force'])).toThrow(/unknown option/);
    expect(() => parseArgs(['deploy', '--image'])).toThrow(/needs a value/);
    expect(() => parseArgs(['deploy', '--dry-run', 'maybe'])).toThrow(/server or client/);
  });
});

describe('images', () => {
  it('finds the repository of tagged, digested and registry-port references', () => {
    expect(repositoryOf('ghcr.io/k8slab/swarm:0.1.0')).toBe('ghcr.io/k8slab/swarm');
    expect(repositoryOf('localhost:5000/swarm')).toBe('localhost:5000/swarm');
    expect(repositoryOf('localhost:5000/swarm-worker:dev@sha256:00')).toBe('localhost:5000/swarm-worker');
  });

  it('replaces only our two images, in containers and initContainers alike', () => {
    const out = overrideImages(installation, { functions: 'reg/swarm:1', worker: 'reg/swarm-worker:1' });
    const images = JSON.stringify(out).match(/"image":"[^"]+"/g);
    expect(images).toEqual(['"image":"reg/swarm:1"', '"image":"busybox:1.36"', '"image":"reg/swarm-worker:1"']);
  });

  it('leaves images alone when no override is given', () => {
    expect(overrideImages(installation, {})).toEqual(installation);
  });
});

describe('planSteps', () => {
  const base = parseArgs(['deploy', '--kubeconfig', '/k', '--watch-namespace', 'team-a']).options;

  it('deploys the CRD first, waits for it, then the rest, then binds each namespace', () => {
    const steps = planSteps('deploy', base, { installation, crd, bindings });
    expect(steps.map((s) => s.args.slice(2, 4).join(' '))).toEqual([
      'get crd',
      'apply --server-side',
      'wait --for=condition=Established',
      'apply --server-side',
      'apply --server-side',
      'label namespace',
    ]);
    expect(steps.every((s) => s.args[0] === '--kubeconfig' && s.args[1] === '/k')).toBe(true);
    expect(splitDocuments(steps[1]?.stdin ?? '').map((d) => d.kind)).toEqual(['CustomResourceDefinition']);
    expect(splitDocuments(steps[3]?.stdin ?? '').map((d) => d.kind)).toEqual(['Namespace', 'Service', 'StatefulSet']);
    expect(splitDocuments(steps[4]?.stdin ?? '')[0]?.metadata?.namespace).toBe('team-a');
    expect(steps[5]?.args).toContain('k8slab.info/swarm-enabled=true');
  });

  it('undeploys in reverse and keeps the CRD', () => {
    const steps = planSteps('undeploy', base, { installation, crd, bindings });
    const last = steps[steps.length - 1];
    expect(last?.args).toContain('delete');
    expect(splitDocuments(last?.stdin ?? '').map((d) => d.kind)).toEqual(['StatefulSet', 'Service', 'Namespace']);
    expect(steps.some((s) => s.args.includes('k8slab.info/swarm-enabled-'))).toBe(true);
  });

  it('passes --dry-run through and does not wait on a CRD that was not created', () => {
    const options = { ...base, dryRun: 'server' as const, watchNamespaces: [] };
    const steps = planSteps('install-crd', options, { installation: [], crd, bindings: [] });
    expect(steps).toHaveLength(1);
    expect(steps[0]?.args).toContain('--dry-run=server');
  });
});

describe('the resync ping per watched namespace', () => {
  const ping: Manifest = splitDocuments(`
apiVersion: sources.knative.dev/v1
kind: PingSource
metadata: {name: swarm-resync-swarm, namespace: swarm-system}
spec: {schedule: "* * * * *", contentType: application/json, data: '{"namespace": "swarm"}', sink: {ref: {kind: Broker, name: swarm}}}
`)[0]!;

  it('renders one per namespace, in swarm-system, named after it, its data naming it', () => {
    const rendered = resyncPingFor(ping, 'team-a');
    expect(rendered.metadata).toEqual({ name: 'swarm-resync-team-a', namespace: 'swarm-system' });
    expect(JSON.parse((rendered.spec as { data: string }).data)).toEqual({ namespace: 'team-a' });
    expect(rendered.spec).toMatchObject({ schedule: '* * * * *', sink: { ref: { kind: 'Broker', name: 'swarm' } } });
  });

  it('is applied with each namespace binding and removed with it', () => {
    const options = parseArgs(['deploy', '--watch-namespace', 'team-a']).options;
    const deploy = planSteps('deploy', options, { installation: [...installation, ping], crd, bindings });
    const binding = deploy.find((s) => s.say.includes('binding the functions in namespace team-a'));
    expect(splitDocuments(binding?.stdin ?? '').map((d) => `${d.kind}/${d.metadata?.namespace}/${d.metadata?.name}`)).toEqual([
      'RoleBinding/team-a/swarm-assign',
      'PingSource/swarm-system/swarm-resync-team-a',
    ]);
    const undeploy = planSteps('undeploy', options, { installation: [...installation, ping], crd, bindings });
    expect(undeploy.find((s) => s.say.includes('removing'))?.stdin).toContain('swarm-resync-team-a');
  });
});

describe('bindNamespace', () => {
  it('places the bindings in the namespace and keeps the subjects in swarm-system', () => {
    const [binding] = bindNamespace(bindings, 'team-b');
    expect(binding?.metadata?.namespace).toBe('team-b');
    expect((binding?.subjects as { namespace: string }[])[0]?.namespace).toBe('swarm-system');
  });
});

describe('webhookUnavailable', () => {
  it('retries a step an admission webhook did not answer (Knative starting), never a refusal', () => {
    // As seen while Knative Eventing's webhook pod was starting.
    const refused =
      'Error from server (InternalError): error when deleting "STDIN": Internal error occurred: failed calling webhook "validation.webhook.eventing.knative.dev": failed to call webhook: Post "https://eventing-webhook.knative-eventing.svc:443/resource-validation?timeout=10s": dial tcp 10.96.165.207:443: connect: connection refused';
    expect(webhookUnavailable(refused)).toBe(true);
    expect(webhookUnavailable('Internal error occurred: failed calling webhook "webhook.serving.knative.dev": failed to call webhook: Post "https://webhook.knative-serving.svc:443/?timeout=10s": no endpoints available for service "webhook"')).toBe(true);
    expect(webhookUnavailable('Internal error occurred: failed calling webhook "x": failed to call webhook: Post "https://x:443": context deadline exceeded')).toBe(true);
    // The webhook answered: a denial is final.
    expect(webhookUnavailable('Error from server (BadRequest): admission webhook "validation.webhook.serving.knative.dev" denied the request: validation failed: expected exactly one, got both')).toBe(false);
    expect(webhookUnavailable('error: unable to recognize "STDIN": no matches for kind "Service" in version "serving.knative.dev/v1"')).toBe(false);
    expect(webhookUnavailable('The connection to the server 127.0.0.1:6443 was refused')).toBe(false);
  });
});
