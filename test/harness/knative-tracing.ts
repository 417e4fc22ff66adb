// Tracing for the real-node Knative stack (dev tooling, issue 12 item 5): the
// collector of knative-stack/otel-collector.yaml, Knative's config-observability
// pointed at it (knative-stack/otel-observability.yaml), the OTEL_* env of the
// Swarm functions (knative-stack/otel-functions-patch.yaml), and the hops one
// scale-up should leave in one trace (for trace-sink.ts checkHops).
//
// Use after Knative is installed (the queue-proxy takes its tracing settings
// from config-observability when a Revision is created, so before the
// functions are deployed, or re-revision them with traceFunctions):
//   import collectorImage() into the node
//   const sink = await startTraceSink({ host: '0.0.0.0' });
//   await installTracing(kubectl, { sinkEndpoint: `http://${NODE_IP}:${sink.port}` });
//   deploy withFunctionTracing(rendered knative/ manifests), or deploy and traceFunctions(kubectl)
//   … scale a StatefulSet …
//   await sink.waitForTrace(scaleUpHops(), AbortSignal.timeout(…));
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { joinDocuments, splitDocuments, type Manifest } from '../../bin/deploy-plan.js';
import type { ProgressFn } from '../controlplane/build.js';
import { buildKnativeImages } from '../controlplane/knative-images.js';
import { eventually } from '../support/timeline.js';
import type { Hop } from './trace-sink.js';

const here = dirname(fileURLToPath(import.meta.url));
export const STACK_DIR = join(here, 'knative-stack');

export const COLLECTOR_NAMESPACE = 'observability';
/** OTLP/HTTP base URL of the collector inside the cluster (exporters append /v1/traces). */
export const COLLECTOR_OTLP_HTTP = `http://otel-collector.${COLLECTOR_NAMESPACE}.svc.cluster.local:4318`;

/**
 * The config-observability keys for tracing that Knative v0.47 reads
 * (knative.dev/pkg observability/tracing/config.go NewFromMap): protocol
 * `http/protobuf` (or grpc, none, stdout), the endpoint as a full URL (the Go
 * exporter is built WithEndpointURL, so the path /v1/traces is part of it),
 * and the rate; at 1 the sampler is AlwaysSample.
 */
export function knativeTracingConfig(): Record<string, string> {
  return {
    'tracing-protocol': 'http/protobuf',
    'tracing-endpoint': `${COLLECTOR_OTLP_HTTP}/v1/traces`,
    'tracing-sampling-rate': '1',
  };
}

/** The namespaces whose config-observability carries Knative's tracing settings. */
export const KNATIVE_NAMESPACES = ['knative-serving', 'knative-eventing'] as const;

/**
 * Deployments that build their tracer provider once, at start, from
 * config-observability (SetupObservabilityOrDie): restarted after the patch.
 * An ApiServerSource's adapter reads K_OBSERVABILITY_CONFIG, which the
 * source reconciler (in eventing-controller) renders from the ConfigMap it
 * watches, but a ConfigMap change does not resync existing sources
 * (pkg/reconciler/apiserversource/controller.go resyncs on feature flags
 * only): eventing-controller is restarted too, reconciling every source at
 * start. The queue-proxy reads OBSERVABILITY_CONFIG, set when a Revision is made.
 */
export const RESTART_AFTER_PATCH: Readonly<Record<(typeof KNATIVE_NAMESPACES)[number], readonly string[]>> = {
  'knative-serving': ['activator'],
  'knative-eventing': ['mt-broker-ingress', 'mt-broker-filter', 'imc-dispatcher', 'eventing-controller'],
};

export interface EnvVar {
  readonly name: string;
  readonly value: string;
}

/** What lib/observability/tracing/setup.ts needs to export to the collector. */
export function functionTracingEnv(): EnvVar[] {
  return [
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: COLLECTOR_OTLP_HTTP },
    { name: 'OTEL_TRACES_EXPORTER', value: 'otlp' },
    // Export within 200 ms rather than 5 s: a test waits for the spans.
    { name: 'OTEL_BSP_SCHEDULE_DELAY', value: '200' },
  ];
}

const FUNCTION_SERVICES = new Set(['swarm-assign', 'swarm-restart']);

/**
 * A copy of `docs` (rendered knative/ manifests) whose function Knative
 * Services carry functionTracingEnv() (replacing variables of the same name).
 */
export function withFunctionTracing(docs: readonly Manifest[], env: readonly EnvVar[] = functionTracingEnv()): Manifest[] {
  return docs.map((doc) => {
    if (doc.kind !== 'Service' || typeof doc.apiVersion !== 'string' || !doc.apiVersion.startsWith('serving.knative.dev/')) return doc;
    if (!FUNCTION_SERVICES.has(doc.metadata?.name ?? '')) return doc;
    const copy = structuredClone(doc) as Manifest & {
      spec?: { template?: { spec?: { containers?: { env?: EnvVar[] }[] } } };
    };
    const container = copy.spec?.template?.spec?.containers?.[0];
    if (!container) throw new Error(`Knative Service ${doc.metadata?.name}: no container`);
    const names = new Set(env.map((e) => e.name));
    container.env = [...(container.env ?? []).filter((e) => !names.has(e.name)), ...env.map((e) => ({ ...e }))];
    return copy;
  });
}

type ServiceWithEnv = Manifest & { spec?: { template?: { spec?: { containers?: { env?: EnvVar[] }[] } } } };

const envOf = (doc: Manifest): EnvVar[] => (doc as ServiceWithEnv).spec?.template?.spec?.containers?.[0]?.env ?? [];

/**
 * The JSON patch that gives a live function Knative Service (`kubectl get
 * ksvc -o json`) the tracing env, or undefined when it has it already. The
 * whole env list is written, so a second run adds nothing.
 */
export function functionEnvPatch(ksvc: Manifest, env: readonly EnvVar[] = functionTracingEnv()): object[] | undefined {
  const before = envOf(ksvc);
  const after = envOf(withFunctionTracing([ksvc], env)[0]!);
  const same = (e: EnvVar) => before.some((b) => b.name === e.name && b.value === e.value);
  if (env.every(same)) return undefined;
  return [{ op: before.length > 0 ? 'replace' : 'add', path: '/spec/template/spec/containers/0/env', value: after }];
}

/**
 * Gives the deployed function Services the tracing env (a new Revision each,
 * whose queue-proxy also picks up config-observability as it is now). For a
 * deploy that cannot go through withFunctionTracing (bin/deploy.ts run as a
 * command); call after installTracing.
 */
export async function traceFunctions(kubectl: Kubectl, namespace = 'swarm-system'): Promise<void> {
  for (const name of FUNCTION_SERVICES) {
    const ksvc = JSON.parse(await kubectl(['get', 'ksvc', name, '-n', namespace, '-o', 'json'])) as Manifest;
    const patch = functionEnvPatch(ksvc);
    if (patch) await kubectl(['patch', 'ksvc', name, '-n', namespace, '--type', 'json', '-p', JSON.stringify(patch)]);
  }
}

/**
 * Waits until each function Knative Service serves its newest Revision (the
 * one traceFunctions made): until then events may reach the old Revision,
 * whose function exports no span.
 */
export async function functionsServeLatest(kubectl: Kubectl, namespace = 'swarm-system', timeoutMs = 300_000): Promise<void> {
  for (const name of FUNCTION_SERVICES) {
    await eventually(`${name} serving its latest Revision`, async () => {
      const ksvc = JSON.parse(await kubectl(['get', 'ksvc', name, '-n', namespace, '-o', 'json'])) as {
        metadata: { generation?: number };
        status?: { observedGeneration?: number; latestCreatedRevisionName?: string; latestReadyRevisionName?: string; conditions?: { type: string; status: string }[] };
      };
      const st = ksvc.status;
      return (
        st?.observedGeneration === ksvc.metadata.generation &&
        st?.latestCreatedRevisionName !== undefined &&
        st.latestReadyRevisionName === st.latestCreatedRevisionName &&
        st.conditions?.find((c) => c.type === 'Ready')?.status === 'True'
      );
    }, timeoutMs, 1000);
  }
}

/** The collector's image archive (built once by knative:images, cached), to import into the node. */
export async function collectorImage(progress?: ProgressFn): Promise<{ name: string; path: string }> {
  const built = await buildKnativeImages(progress, ['otelcol']);
  const archive = built.archives.find((a) => a.name.includes('/otelcol:'));
  if (!archive) throw new Error('knative:images built no otelcol image');
  return { name: archive.name, path: archive.path };
}

export interface CollectorOptions {
  /** Where pods reach the trace sink, e.g. http://10.244.0.1:<port> (node-config.ts NODE_IP). */
  readonly sinkEndpoint: string;
  /** debug exporter verbosity: basic (a line per batch), normal or detailed (every span). */
  readonly debugVerbosity?: 'basic' | 'normal' | 'detailed';
}

type CollectorDeployment = Manifest & {
  spec: { template: { metadata: { annotations: Record<string, string> }; spec: { containers: { env: EnvVar[] }[] } } };
};

/** otel-collector.yaml with the sink's endpoint and the debug verbosity filled in. */
export function collectorManifests(options: CollectorOptions): Manifest[] {
  const docs = splitDocuments(readFileSync(join(STACK_DIR, 'otel-collector.yaml'), 'utf8'));
  const settings: Record<string, string> = { TRACE_SINK_ENDPOINT: options.sinkEndpoint, DEBUG_VERBOSITY: options.debugVerbosity ?? 'basic' };
  const config = docs.find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'otel-collector-config') as
    | (Manifest & { data: Record<string, string> })
    | undefined;
  if (!config) throw new Error('otel-collector.yaml: no ConfigMap otel-collector-config');
  return docs.map((doc) => {
    if (doc.kind !== 'Deployment' || doc.metadata?.name !== 'otel-collector') return doc;
    const copy = structuredClone(doc) as CollectorDeployment;
    const container = copy.spec.template.spec.containers[0]!;
    for (const variable of container.env) {
      if (variable.name in settings) (variable as { value: string }).value = settings[variable.name]!;
    }
    copy.spec.template.metadata.annotations['swarm.local/config-checksum'] = createHash('sha256')
      .update(JSON.stringify([config.data, container.env]))
      .digest('hex')
      .slice(0, 16);
    return copy;
  });
}

/** The collector's own config file (the ConfigMap's config.yaml), e.g. to run otelcol on the host. */
export function collectorConfigText(): string {
  const docs = splitDocuments(readFileSync(join(STACK_DIR, 'otel-collector.yaml'), 'utf8'));
  const config = docs.find((d) => d.kind === 'ConfigMap' && d.metadata?.name === 'otel-collector-config') as
    | (Manifest & { data?: Record<string, string> })
    | undefined;
  const text = config?.data?.['config.yaml'];
  if (!text) throw new Error('otel-collector.yaml: ConfigMap otel-collector-config has no config.yaml');
  return text;
}

/** The config-observability merge patches of otel-observability.yaml, by namespace. */
export function observabilityPatches(): { namespace: string; data: Record<string, string> }[] {
  return splitDocuments(readFileSync(join(STACK_DIR, 'otel-observability.yaml'), 'utf8')).map((doc) => ({
    namespace: doc.metadata?.namespace ?? '',
    data: (doc as { data?: Record<string, string> }).data ?? {},
  }));
}

/** The env of otel-functions-patch.yaml (JSON 6902 `add` operations). */
export function functionsPatchEnv(): EnvVar[] {
  const ops = parse(readFileSync(join(STACK_DIR, 'otel-functions-patch.yaml'), 'utf8')) as { op: string; path: string; value: EnvVar }[];
  return ops.map((op) => ({ name: op.value.name, value: op.value.value }));
}

/** Runs kubectl with `args` (and `stdin`), resolving with its stdout; rejects on failure. */
export type Kubectl = (args: readonly string[], stdin?: string) => Promise<string> | string;

export interface InstallTracingOptions extends CollectorOptions {
  /** Passed to `kubectl rollout status --timeout`; default 180s. */
  readonly rolloutTimeout?: string;
}

/**
 * Installs the collector, points Knative's config-observability at it and
 * restarts the Knative components that read it only at start, waiting for
 * each rollout. Idempotent. Call after Knative is installed and before the
 * Swarm functions are deployed.
 */
export async function installTracing(kubectl: Kubectl, options: InstallTracingOptions): Promise<void> {
  const timeout = `--timeout=${options.rolloutTimeout ?? '180s'}`;
  await kubectl(['apply', '-f', '-'], joinDocuments(collectorManifests(options)));
  for (const { namespace, data } of observabilityPatches()) {
    await kubectl(['patch', 'configmap', 'config-observability', '-n', namespace, '--type', 'merge', '-p', JSON.stringify({ data })]);
  }
  for (const namespace of KNATIVE_NAMESPACES) {
    for (const name of RESTART_AFTER_PATCH[namespace]) {
      await kubectl(['rollout', 'restart', `deployment/${name}`, '-n', namespace]);
    }
  }
  await kubectl(['rollout', 'status', 'deployment/otel-collector', '-n', COLLECTOR_NAMESPACE, timeout]);
  for (const namespace of KNATIVE_NAMESPACES) {
    for (const name of RESTART_AFTER_PATCH[namespace]) {
      await kubectl(['rollout', 'status', `deployment/${name}`, '-n', namespace, timeout]);
    }
  }
}

/** Removes the collector (the config-observability patches stay; harmless without it). */
export async function uninstallTracing(kubectl: Kubectl): Promise<void> {
  await kubectl(['delete', 'namespace', COLLECTOR_NAMESPACE, '--ignore-not-found', '--wait=false']);
}

export interface ScaleUpNames {
  /** Namespace of the Broker and Triggers (knative/base: swarm-system). */
  readonly namespace?: string;
  readonly broker?: string;
  readonly assignTrigger?: string;
  readonly restartTrigger?: string;
}

/**
 * The hops one scale-up leaves in one trace, with their parent links.
 *
 * Span names are Knative v0.47's: the broker ingress's `broker:<name>.<ns>`
 * (pkg/broker/ingress/ingress_handler.go) and the filter's
 * `trigger:<name>.<ns>` (pkg/broker/filter/filter_handler.go), under the
 * services broker.ingress and broker.filter (OTEL resource service.name); the
 * functions' are ours (lib/observability/tracing/instrumentation.ts).
 *
 * Links: everything Knative does travels in the HTTP `traceparent` header, so
 * Knative's hops and each reconcile are descendants (HTTP server/client spans,
 * the IMC dispatcher, activator and queue-proxy between). The reply goes back
 * through the filter as the HTTP response to the IMC dispatcher that delivered
 * the original event, which sends it to the broker ingress itself (seen on
 * real Knative: `inmemorychannel.dispatcher: send http://broker-ingress…`
 * under the dispatcher's receive span): so the second ingress hangs under the
 * first, not under assign. restart's reconcile continues the header too (propagation.ts:
 * the delivery is the parent), so it hangs under the delivery to restart, and
 * names assign's `send` span, which the event's traceparent extension carries,
 * in a span link.
 */
export function scaleUpHops(names: ScaleUpNames = {}): Hop[] {
  const ns = names.namespace ?? 'swarm-system';
  const broker = `broker:${names.broker ?? 'swarm'}.${ns}`;
  return [
    { id: 'ingress', match: { service: 'broker.ingress', name: broker } },
    { id: 'deliver-assign', match: { service: 'broker.filter', name: `trigger:${names.assignTrigger ?? 'swarm-assign'}.${ns}` }, under: 'ingress' },
    { id: 'assign', match: { service: 'swarm-assign', name: 'reconcile assign' }, under: 'deliver-assign' },
    { id: 'assign-api', match: { service: 'swarm-assign', name: /^kube /, kind: 'client' }, under: 'assign', link: 'child' },
    { id: 'reply', match: { service: 'swarm-assign', name: /^send /, kind: 'producer' }, under: 'assign', link: 'child' },
    { id: 'reply-ingress', match: { service: 'broker.ingress', name: broker }, under: 'ingress' },
    {
      id: 'deliver-restart',
      match: { service: 'broker.filter', name: `trigger:${names.restartTrigger ?? 'swarm-restart'}.${ns}` },
      under: 'reply-ingress',
    },
    { id: 'restart', match: { service: 'swarm-restart', name: 'reconcile restart' }, under: 'deliver-restart', linksTo: 'reply' },
    { id: 'restart-delete', match: { service: 'swarm-restart', name: 'kube DELETE pods', kind: 'client' }, under: 'restart', link: 'child' },
  ];
}

type PoolDoc = Manifest & {
  spec: {
    replicas?: number;
    serviceName?: string;
    statefulSetName?: string;
    configMapName?: string;
    selector?: { matchLabels?: Record<string, string> };
    workload?: { jobs?: unknown[] };
    restart?: Record<string, unknown>;
    template?: {
      metadata?: { labels?: Record<string, string> };
      spec?: { containers?: { env?: { name: string }[] }[]; volumes?: { configMap?: { name?: string } }[] };
    };
  };
};

/**
 * A second pool beside the sample whose scale-up's deletes come from assign's
 * reply. The sample's reference workers hot-reload config.yml and acknowledge
 * their new share before `restart` acts, so its scale-up deletes nothing; and
 * with MakeBeforeBreak a loser's restart waits for the gainer's readiness, a
 * pod event that reaches `restart` directly, in a trace of its own. So: from
 * the rendered sample (`kubectl kustomize knative/samples`), its StatefulSet
 * and Swarm renamed `name`, at `replicas`, with `jobs` of its jobs, the pods
 * not declaring `k8slab.info/acknowledges` and given no POD_UID (they write no
 * Lease: `restart` deletes each pod whose share changed), and handoff
 * BreakBeforeMake (a loser restarts first, as soon as assign has written).
 */
export function restartingPoolManifests(sample: readonly Manifest[], options: { name: string; replicas: number; jobs: number }): Manifest[] {
  const { name } = options;
  const configMapName = `${name}-config`;
  const statefulSet = sample.find((d) => d.kind === 'StatefulSet') as PoolDoc | undefined;
  const swarm = sample.find((d) => d.kind === 'Swarm') as PoolDoc | undefined;
  if (!statefulSet || !swarm) throw new Error('the sample has no StatefulSet or no Swarm');
  const sts = structuredClone(statefulSet);
  sts.metadata = { ...sts.metadata, name };
  sts.spec.replicas = options.replicas;
  sts.spec.serviceName = name;
  sts.spec.selector = { matchLabels: { app: name } };
  const labels: Record<string, string> = { ...sts.spec.template?.metadata?.labels, app: name, 'k8slab.info/swarm': name };
  delete labels['k8slab.info/acknowledges'];
  const template = sts.spec.template!;
  template.metadata = { ...template.metadata, labels };
  for (const container of template.spec?.containers ?? []) container.env = (container.env ?? []).filter((e) => e.name !== 'POD_UID');
  for (const volume of template.spec?.volumes ?? []) if (volume.configMap) volume.configMap.name = configMapName;
  const owner = structuredClone(swarm);
  owner.metadata = { ...owner.metadata, name };
  owner.spec.statefulSetName = name;
  owner.spec.configMapName = configMapName;
  owner.spec.restart = { ...owner.spec.restart, policy: 'Restart', handoff: 'BreakBeforeMake' };
  // Restart-only workers take no failover (the API refuses it: failoverHotReloads).
  delete (owner.spec as { failover?: unknown }).failover;
  owner.spec.workload = { ...owner.spec.workload, jobs: (owner.spec.workload?.jobs ?? []).slice(0, options.jobs) };
  return [sts, owner];
}
