import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { splitDocuments, type Manifest } from '../../bin/deploy-plan.js';
import { exportersFromEnv } from '../../lib/observability/tracing/exporters.js';
import { IMAGE_REGISTRY } from '../controlplane/knative-images.js';
import { NODE_IP } from '../controlplane/node-config.js';
import {
  COLLECTOR_NAMESPACE,
  COLLECTOR_OTLP_HTTP,
  collectorConfigText,
  collectorManifests,
  functionEnvPatch,
  functionTracingEnv,
  functionsPatchEnv,
  installTracing,
  knativeTracingConfig,
  observabilityPatches,
  restartingPoolManifests,
  traceFunctions,
  uninstallTracing,
  withFunctionTracing,
} from '../harness/knative-tracing.js';

const versions = JSON.parse(readFileSync(new URL('../controlplane/versions.json', import.meta.url), 'utf8')) as { otelcol: string };

type Container = { image: string; imagePullPolicy: string; env: { name: string; value: string }[] };
const deployment = (docs: Manifest[]) =>
  docs.find((d) => d.kind === 'Deployment') as Manifest & {
    spec: { template: { metadata: { annotations: Record<string, string> }; spec: { containers: Container[] } } };
  };

describe('config-observability for Knative v0.47', () => {
  it('otel-observability.yaml patches both namespaces with knativeTracingConfig()', () => {
    expect(observabilityPatches()).toEqual([
      { namespace: 'knative-serving', data: knativeTracingConfig() },
      { namespace: 'knative-eventing', data: knativeTracingConfig() },
    ]);
  });

  it('is what knative.dev/pkg observability/tracing accepts: OTLP/HTTP to the collector Service, full URL, always sampled', () => {
    const config = knativeTracingConfig();
    expect(Object.keys(config).sort()).toEqual(['tracing-endpoint', 'tracing-protocol', 'tracing-sampling-rate']);
    expect(config['tracing-protocol']).toBe('http/protobuf');
    const url = new URL(config['tracing-endpoint']!);
    expect(url.pathname).toBe('/v1/traces');
    expect(url.hostname).toBe(`otel-collector.${COLLECTOR_NAMESPACE}.svc.cluster.local`);
    expect(Number(config['tracing-sampling-rate'])).toBe(1);
  });
});

describe('the collector manifests', () => {
  const docs = collectorManifests({ sinkEndpoint: `http://${NODE_IP}:4321`, debugVerbosity: 'detailed' });

  it('run the otelcol image knative:images builds, never pulled', () => {
    const container = deployment(docs).spec.template.spec.containers[0]!;
    expect(container.image).toBe(`${IMAGE_REGISTRY}/otelcol:${versions.otelcol}`);
    expect(container.imagePullPolicy).toBe('Never');
  });

  it('fill in the sink and the verbosity, and change the checksum with them', () => {
    const dep = deployment(docs);
    const env = Object.fromEntries(dep.spec.template.spec.containers[0]!.env.map((e) => [e.name, e.value]));
    expect(env.TRACE_SINK_ENDPOINT).toBe(`http://${NODE_IP}:4321`);
    expect(env.DEBUG_VERBOSITY).toBe('detailed');
    const other = deployment(collectorManifests({ sinkEndpoint: `http://${NODE_IP}:4322` }));
    expect(dep.spec.template.metadata.annotations['swarm.local/config-checksum']).toMatch(/^[0-9a-f]{16}$/);
    expect(other.spec.template.metadata.annotations['swarm.local/config-checksum']).not.toBe(
      dep.spec.template.metadata.annotations['swarm.local/config-checksum'],
    );
  });

  it('expose OTLP gRPC and HTTP as Service otel-collector where the endpoints point', () => {
    const service = docs.find((d) => d.kind === 'Service') as Manifest & { spec: { ports: { port: number }[] } };
    expect(service.metadata).toMatchObject({ name: 'otel-collector', namespace: COLLECTOR_NAMESPACE });
    expect(service.spec.ports.map((p) => p.port)).toEqual([4317, 4318]);
    expect(new URL(COLLECTOR_OTLP_HTTP).port).toBe('4318');
    expect(docs.every((d) => d.kind === 'Namespace' || d.metadata?.namespace === COLLECTOR_NAMESPACE)).toBe(true);
  });

  it('carry a config that receives OTLP and exports JSON to the sink', () => {
    const config = collectorConfigText();
    expect(config).toContain('encoding: json');
    expect(config).toContain('endpoint: ${env:TRACE_SINK_ENDPOINT}');
    expect(config).toMatch(/exporters: \[debug, otlphttp\/sink\]/);
  });
});

describe('the functions’ tracing env', () => {
  it('otel-functions-patch.yaml adds functionTracingEnv()', () => {
    expect(functionsPatchEnv()).toEqual(functionTracingEnv());
  });

  it('makes setup.ts export over OTLP', () => {
    const env = Object.fromEntries(functionTracingEnv().map((e) => [e.name, e.value]));
    expect(exportersFromEnv(env)).toEqual({ exporters: ['otlp'], warnings: [] });
  });

  it('withFunctionTracing adds it to the two function Services only, keeping their env, idempotently', () => {
    const base = splitDocuments(readFileSync(new URL('../../knative/base/services.yaml', import.meta.url), 'utf8'));
    const traced = withFunctionTracing(withFunctionTracing(base));
    for (const [before, after] of base.map((doc, i) => [doc, traced[i]!] as const)) {
      const name = before.metadata?.name ?? '';
      const env = (doc: Manifest) =>
        ((doc as { spec?: { template?: { spec?: { containers?: { env?: { name: string }[] }[] } } } }).spec?.template?.spec?.containers?.[0]?.env ?? []).map(
          (e) => e.name,
        );
      if (name === 'swarm-assign' || name === 'swarm-restart') {
        expect(env(after)).toEqual([...env(before), ...functionTracingEnv().map((e) => e.name)]);
      } else {
        expect(after).toBe(before);
      }
    }
    expect(base.filter((d) => d.metadata?.name === 'swarm-assign' || d.metadata?.name === 'swarm-restart')).toHaveLength(2);
  });
});

describe('traceFunctions (a Swarm deployed by bin/deploy.ts)', () => {
  const live = (env?: { name: string; value: string }[]): Manifest =>
    ({
      apiVersion: 'serving.knative.dev/v1',
      kind: 'Service',
      metadata: { name: 'swarm-assign', namespace: 'swarm-system' },
      spec: { template: { spec: { containers: [{ name: 'function', ...(env ? { env } : {}) }] } } },
    }) as Manifest;

  it('functionEnvPatch writes the whole env list once, keeping what was there', () => {
    const patch = functionEnvPatch(live([{ name: 'FUNCTION', value: 'assign' }]));
    expect(patch).toEqual([
      { op: 'replace', path: '/spec/template/spec/containers/0/env', value: [{ name: 'FUNCTION', value: 'assign' }, ...functionTracingEnv()] },
    ]);
    expect(functionEnvPatch(live([{ name: 'FUNCTION', value: 'assign' }, ...functionTracingEnv()]))).toBeUndefined();
    expect(functionEnvPatch(live())).toEqual([{ op: 'add', path: '/spec/template/spec/containers/0/env', value: functionTracingEnv() }]);
  });

  it('patches each function Service that lacks the env', async () => {
    const calls: string[] = [];
    await traceFunctions((args) => {
      calls.push(args.join(' '));
      if (args[0] !== 'get') return '';
      const traced = args[2] === 'swarm-restart';
      return JSON.stringify(live(traced ? functionTracingEnv() : [{ name: 'FUNCTION', value: 'assign' }]));
    });
    expect(calls.map((c) => c.split(' -p ')[0])).toEqual([
      'get ksvc swarm-assign -n swarm-system -o json',
      'patch ksvc swarm-assign -n swarm-system --type json',
      'get ksvc swarm-restart -n swarm-system -o json',
    ]);
  });
});

describe('installTracing', () => {
  it('applies the collector, patches both ConfigMaps, restarts what reads them at start and waits', async () => {
    const calls: { args: readonly string[]; stdin?: string }[] = [];
    await installTracing(
      (args, stdin) => {
        calls.push(stdin === undefined ? { args } : { args, stdin });
        return '';
      },
      { sinkEndpoint: 'http://10.244.0.1:4319' },
    );
    const lines = calls.map((c) => c.args.join(' '));
    expect(lines[0]).toBe('apply -f -');
    expect(splitDocuments(calls[0]!.stdin ?? '').map((d) => d.kind)).toEqual(['Namespace', 'ConfigMap', 'Deployment', 'Service']);
    expect(lines.filter((l) => l.startsWith('patch configmap config-observability'))).toEqual([
      `patch configmap config-observability -n knative-serving --type merge -p ${JSON.stringify({ data: knativeTracingConfig() })}`,
      `patch configmap config-observability -n knative-eventing --type merge -p ${JSON.stringify({ data: knativeTracingConfig() })}`,
    ]);
    expect(lines.filter((l) => l.startsWith('rollout restart'))).toEqual([
      'rollout restart deployment/activator -n knative-serving',
      'rollout restart deployment/mt-broker-ingress -n knative-eventing',
      'rollout restart deployment/mt-broker-filter -n knative-eventing',
      'rollout restart deployment/imc-dispatcher -n knative-eventing',
      'rollout restart deployment/eventing-controller -n knative-eventing',
    ]);
    expect(lines.filter((l) => l.startsWith('rollout status'))).toHaveLength(6);
    // Restarts come after both patches: the components read the ConfigMap at start.
    const lastPatch = lines.findLastIndex((l) => l.startsWith('patch'));
    expect(lines.findIndex((l) => l.startsWith('rollout restart'))).toBeGreaterThan(lastPatch);
  });

  it('uninstall deletes the collector namespace', async () => {
    const calls: string[] = [];
    await uninstallTracing((args) => {
      calls.push(args.join(' '));
      return '';
    });
    expect(calls).toEqual([`delete namespace ${COLLECTOR_NAMESPACE} --ignore-not-found --wait=false`]);
  });
});

describe('restartingPoolManifests (a pool whose changes end in pod deletes)', () => {
  const sample = ['statefulset.yaml', 'swarm.yaml'].flatMap((file) =>
    splitDocuments(readFileSync(new URL(`../../knative/samples/${file}`, import.meta.url), 'utf8')),
  );
  const [sts, swarm] = restartingPoolManifests(sample, { name: 'trace-worker', replicas: 1, jobs: 4 }) as [
    Manifest & { spec: Record<string, unknown> & { template: { metadata: { labels: Record<string, string> }; spec: { containers: { env: { name: string }[] }[]; volumes: { configMap?: { name: string } }[] } } } },
    Manifest & { spec: { statefulSetName: string; configMapName: string; restart: { policy: string }; workload: { jobs: unknown[] } } },
  ];

  it('renames the StatefulSet and its Swarm, at the replicas and jobs asked for, restarting losers first', () => {
    expect(sts.kind).toBe('StatefulSet');
    expect(sts.metadata?.name).toBe('trace-worker');
    expect(sts.spec).toMatchObject({ replicas: 1, serviceName: 'trace-worker', selector: { matchLabels: { app: 'trace-worker' } } });
    expect(sts.spec.template.metadata.labels).toMatchObject({ app: 'trace-worker', 'k8slab.info/swarm': 'trace-worker' });
    expect(sts.spec.template.spec.volumes.find((v) => v.configMap)?.configMap?.name).toBe('trace-worker-config');
    expect(swarm.kind).toBe('Swarm');
    expect(swarm.metadata?.name).toBe('trace-worker');
    expect(swarm.spec).toMatchObject({ statefulSetName: 'trace-worker', configMapName: 'trace-worker-config', restart: { policy: 'Restart', handoff: 'BreakBeforeMake', maxUnavailable: 1 } });
    expect(swarm.spec.workload.jobs).toHaveLength(4);
  });

  it('makes pods that do not acknowledge: no acknowledges label, no POD_UID', () => {
    expect(sts.spec.template.metadata.labels).not.toHaveProperty('k8slab.info/acknowledges');
    const env = sts.spec.template.spec.containers[0]!.env.map((e) => e.name);
    expect(env).toContain('POD_NAME');
    expect(env).not.toContain('POD_UID');
  });

  it('leaves the sample as it was', () => {
    const original = sample.find((d) => d.kind === 'StatefulSet') as Manifest & { spec: { template: { metadata: { labels: Record<string, string> } } } };
    expect(original.metadata?.name).toBe('swarm-worker');
    expect(original.spec.template.metadata.labels['k8slab.info/acknowledges']).toBe('lease');
  });
});
