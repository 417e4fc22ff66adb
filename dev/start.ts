// npm start: the whole system on one machine. Builds (first run) and starts the
// embedded control plane, installs the CRD and the sample Swarm, runs the
// functions behind a local broker fed by the real ApiServerSource adapter, and
// prints every reconcile as it happens. Ctrl-C stops what it started.
import { join } from 'node:path';
import type { Delivery } from './broker/local-broker.js';
import { createLogger } from '../lib/observability/logger.js';
import { TracePrinter } from './trace-printer.js';
import { ALL_TOOLS } from '../test/controlplane/build.js';
import { defaultWorkDir, ensureBuilt, healthyCluster, startCluster, type Cluster } from '../test/controlplane/cluster.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from '../test/harness/local-knative.js';

const SAMPLE_NAMESPACE = 'swarm';
const say = (line: string) => process.stdout.write(`\x1b[1m▸\x1b[0m ${line}\n`);

function describeDelivery(d: Delivery): string {
  const data = d.event.data as { kind?: string; metadata?: { name?: string }; version?: number } | undefined;
  const what = d.event.type.startsWith('dev.knative.apiserver.') ? `${data?.kind ?? '?'} ${data?.metadata?.name ?? ''} ${d.event.type.split('.').pop()}` : d.event.type;
  const changed = d.reply?.data as { version?: number; workers?: string[] } | undefined;
  const reply = d.reply ? ` ↩ ${d.reply.type} v${changed?.version} (share changed: ${changed?.workers?.join(', ') || 'none'})` : '';
  const summary = d.body as { swarms?: Array<Record<string, unknown>> } | undefined;
  const results = (summary?.swarms ?? []).map((s) => {
    const bits = [s.swarm, s.result];
    if (s.version !== undefined) bits.push(`v${String(s.version)}`);
    if (typeof s.moved === 'number' && s.moved > 0) bits.push(`moved ${s.moved}`);
    if (Array.isArray(s.restarted) && s.restarted.length) bits.push(`restarted ${s.restarted.join(',')}`);
    if (typeof s.waiting === 'string') bits.push(`(${s.waiting})`);
    return bits.join(' ');
  });
  return `${d.subscriber.padEnd(13)} ${what.padEnd(38)} ${String(d.status)}${reply}${results.length ? `  ${results.join('; ')}` : ''}`;
}

async function main(): Promise<void> {
  say('building the control plane if needed (first run: several minutes, cached afterwards)');
  await ensureBuilt((line) => say(line), ALL_TOOLS);

  let cluster: Cluster | undefined;
  const running = await healthyCluster(defaultWorkDir);
  const kubeconfig = running?.kubeconfigPath ?? (cluster = await startCluster({ onProgress: (l) => say(l) })).kubeconfigPath;
  say(running ? `reusing the cluster at ${running.server}` : `cluster up: ${cluster?.server}`);

  say('installing the Swarm CRD and identities (knative/base), then the sample (knative/samples)');
  await installSwarm(kubeconfig);
  await enableNamespace(kubeconfig, SAMPLE_NAMESPACE);

  // Span trees in dim text under each reconcile.
  const quietTraces = new TracePrinter({ out: { write: (text: string) => process.stdout.write(`\x1b[2m${text}\x1b[0m`) } });
  const local: LocalKnative = await startLocalKnative({
    adminKubeconfig: kubeconfig,
    namespace: SAMPLE_NAMESPACE,
    workDir: join(defaultWorkDir, 'local-knative'),
    onDelivery: (d) => say(describeDelivery(d)),
    hostExtras: { log: createLogger({ name: 'swarm', pretty: true, level: process.env.LOG_LEVEL ?? 'info' }), spanProcessors: [quietTraces] },
  });
  await kubectl(kubeconfig, ['apply', '-k', join('knative', 'samples')]);

  say(`broker ${local.brokerUrl}  assign :${local.hosts.assign[0]?.port}  restart :${local.hosts.restart[0]?.port}`);
  say('try, in another terminal:');
  process.stdout.write(
    [
      `    kubectl --kubeconfig .swarm/kubeconfig -n ${SAMPLE_NAMESPACE} get swm`,
      `    kubectl --kubeconfig .swarm/kubeconfig -n ${SAMPLE_NAMESPACE} scale sts/swarm-worker --replicas 3`,
      `    kubectl --kubeconfig .swarm/kubeconfig -n ${SAMPLE_NAMESPACE} get cm swarm-worker-config -o jsonpath='{.data.config\\.yml}'`,
      `    curl -H 'Accept: text/html' http://127.0.0.1:${local.hosts.assign[0]?.port}/swarms/${SAMPLE_NAMESPACE}/swarm-worker`,
      '    Ctrl-C to stop',
      '',
    ].join('\n'),
  );

  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    say('stopping');
    await local.stop();
    if (cluster) await cluster.stop();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop());
  process.on('SIGTERM', () => void stop());
}

main().catch((err: unknown) => {
  process.stderr.write(`swarm start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
