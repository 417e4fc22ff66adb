// npm start: the whole system on one machine, as a user runs it. Builds (first
// run) and starts the embedded control plane with its real node, installs real
// Knative Serving + Eventing (and Traefik) from the images `npm run
// knative:images` builds (first run: about 30 minutes, cached afterwards),
// deploys Swarm with `npm run deploy` and its image built from the Dockerfile,
// applies the sample (knative/samples), and shows a live view of what it
// observes, polled (dev/observed-view.ts): the Swarm's status, each new config
// version with what it moved and the workers' shares, the functions' pods
// (scale to zero, the activator's wake-up), and for each config version a
// link to the trace that made it in Zipkin's UI on localhost:9411: Knative and
// the functions export their spans to the in-cluster collector, which sends
// them to a trace sink here, which posts them to Zipkin (knative-tracing.ts,
// trace-sink.ts, zipkin-server.ts). The functions' logs are their
// pods' (`kubectl logs`). Ctrl-C (or SIGTERM, SIGHUP) stops what it started,
// whatever stdout is (dev/shutdown.ts); on a cluster it reused, Knative and
// Swarm stay installed. package.json runs it as `exec node --import tsx
// dev/start.ts` so that this process is npm's own child, the one npm forwards
// SIGINT/SIGTERM to and waits for (neither /bin/sh nor the tsx CLI in between:
// docs/testing.md, "`npm start` in detail"; test/unit/dev-start-signals.test.ts).
// `--knative`, from when this was not the default, is accepted and changes
// nothing.
import { createK8sClient, loadKubeConfig } from '../lib/kube/k8s-client.js';
import { swarmViewOf } from '../functions/introspection-read.js';
import { ALL_TOOLS } from '../test/controlplane/build.js';
import { defaultWorkDir, ensureBuilt, healthyCluster, linkBinaries, startCluster, type Cluster } from '../test/controlplane/cluster.js';
import { NODE_IP } from '../test/controlplane/node-config.js';
import { functionsServeLatest, traceFunctions, type Kubectl } from '../test/harness/knative-tracing.js';
import { zipkinTraceUrl } from '../test/harness/otlp-to-zipkin.js';
import { applySample, deploySwarmOnKnative, installKnativeWithTracing, kubectl, SYSTEM_NAMESPACE } from '../test/harness/real-knative.js';
import { startTraceSink, type TraceSink } from '../test/harness/trace-sink.js';
import { startZipkin, ZIPKIN_PORT, zipkinForwarder } from '../test/harness/zipkin-server.js';
import { changeTraces, configWrites, versionTraces, type Sighting } from './change-traces.js';
import { observedView, type ObservedMemory } from './observed-view.js';
import { say, stopOnSignals } from './shutdown.js';

const SAMPLE_NAMESPACE = 'swarm';
const tty = process.stdout.isTTY === true;
const bold = (text: string) => (tty ? `\x1b[1m${text}\x1b[0m` : text);
const progress = (line: string) => say(`${bold('▸')} ${line}\n`);
const clock = () => new Date().toTimeString().slice(0, 8);
/** Zipkin's address as the links print it. */
const VIEWER = `http://localhost:${ZIPKIN_PORT}`;

// What this run started, stopped in reverse order; a start still in progress
// is waited for first, so nothing it launches is missed.
const stops: Array<() => Promise<void>> = [];
let inProgress: Promise<unknown> = Promise.resolve();
let stopping = false;
const track = <T>(starting: Promise<T>, stop: (started: T) => Promise<void>): Promise<T> => {
  inProgress = starting;
  return starting.then((started) => {
    stops.push(() => stop(started));
    if (stopping) throw new Error('stopping');
    return started;
  });
};

// Ends a start that is still waiting (for another cluster's real node, say) instead of finishing it only to stop it.
const aborter = new AbortController();
const stopAll = stopOnSignals(
  async () => {
    stopping = true;
    aborter.abort();
    await inProgress.catch(() => undefined);
    for (const stop of stops.reverse()) await stop().catch((err: unknown) => process.stderr.write(`stop: ${String(err)}\n`));
  },
  { onStopping: () => progress('stopping') },
);

async function main(): Promise<void> {
  progress('building the control plane if needed (first run: several minutes, cached afterwards)');
  await ensureBuilt((line) => progress(line), ALL_TOOLS); // 'knative': its module also builds the dead-letter Service's event_display image
  await linkBinaries(); // .swarm/bin/kubectl, as the commands below use it

  const running = await healthyCluster(defaultWorkDir);
  let kubeconfig: string;
  let cluster: Cluster | string;
  if (running) {
    kubeconfig = running.kubeconfigPath;
    cluster = defaultWorkDir;
    progress(`reusing the cluster at ${running.server}`);
  } else {
    // The watchdog (ownerPid) stops the cluster even if this process is killed outright.
    cluster = await track(startCluster({ onProgress: (l) => progress(l), ownerPid: process.pid, signal: aborter.signal }), (c) => c.stop());
    kubeconfig = cluster.kubeconfigPath;
  }
  await runOnKnative(cluster, kubeconfig, running !== undefined);
}

/** Real Knative Serving + Eventing + Traefik on `cluster`, Swarm deployed the user's way, the sample, then the live view. */
async function runOnKnative(cluster: Cluster | string, kubeconfig: string, reused: boolean): Promise<void> {
  const sink = await startViewer();
  progress('installing Knative Serving + Eventing + Traefik from the images `npm run knative:images` builds (first run: about 30 minutes, cached afterwards), and the trace collector');
  const installed = await installKnativeWithTracing(cluster, { kubeconfig, progress, sinkEndpoint: `http://${NODE_IP}:${sink.port}` });
  progress('deploying Swarm with `npm run deploy` and its image built from the Dockerfile');
  const deployed = await deploySwarmOnKnative(cluster, installed, { kubeconfig, progress, watchNamespaces: [SAMPLE_NAMESPACE] });
  progress('the functions export their spans to the collector: a new Revision each, waited for until it serves');
  const kubectlHere: Kubectl = (args, stdin) => kubectl(kubeconfig, args, stdin);
  await traceFunctions(kubectlHere, SYSTEM_NAMESPACE);
  await functionsServeLatest(kubectlHere, SYSTEM_NAMESPACE);
  await applySample(kubeconfig, deployed.workerImage);
  if (reused) stops.push(async () => progress('Knative and Swarm stay installed on the reused cluster (`npm run undeploy` removes Swarm)'));
  const kubectlHint = '.swarm/bin/kubectl --kubeconfig .swarm/kubeconfig';
  say(
    [
      'try, in another terminal:',
      `    ${kubectlHint} -n ${SAMPLE_NAMESPACE} scale swm/swarm-worker --replicas 3`,
      `    ${kubectlHint} -n ${SAMPLE_NAMESPACE} get swm`,
      `    ${kubectlHint} -n ${SYSTEM_NAMESPACE} get ksvc,broker,trigger,apiserversource,pingsource`,
      `    ${kubectlHint} -n ${SYSTEM_NAMESPACE} logs -l serving.knative.dev/service=swarm-assign -c function   # the functions' logs`,
      `Traces: ${VIEWER}/zipkin/ (each new config version's line is followed by its trace's link once its spans are in).`,
      'The functions scale to zero when idle; a change wakes assign through the activator. Ctrl-C stops everything npm start started.',
      '',
    ].join('\n'),
  );
  const kube = createK8sClient(loadKubeConfig(kubeconfig));
  const viewOf = swarmViewOf(kube);
  const functions = ['swarm-assign', 'swarm-restart'];
  let memory: ObservedMemory = {};
  // Each config version and when the view first read it: the time join of dev/change-traces.ts.
  const sightings: Sighting[] = [];
  const observe = async () => {
    const readAt = Date.now();
    const [swarm, ...pods] = await Promise.all([
      kube.getSwarm(SAMPLE_NAMESPACE, 'swarm-worker'),
      ...functions.map((fn) => kube.listPods(SYSTEM_NAMESPACE, `serving.knative.dev/service=${fn}`)),
    ]);
    const view = swarm ? await viewOf(swarm) : undefined;
    const functionPods = Object.fromEntries(functions.map((fn, i) => [fn, pods[i]!.filter((p) => !p.terminating).length]));
    if (view && view.version > 0 && view.version !== sightings.at(-1)?.version) sightings.push({ version: view.version, atMs: readAt });
    const spans = sink.spans();
    const writes = swarm ? configWrites(spans, SAMPLE_NAMESPACE, swarm.spec.configMapName) : [];
    const traces = versionTraces(sightings, changeTraces(spans, SAMPLE_NAMESPACE, 'swarm-worker'), writes);
    const traceLinks = new Map([...traces].map(([v, id]) => [v, zipkinTraceUrl(VIEWER, id)]));
    const next = observedView(memory, { time: clock(), swarm: `${SAMPLE_NAMESPACE}/swarm-worker`, status: swarm?.status, ...(view ? { view } : {}), functionPods, traceLinks });
    memory = next.memory;
    for (const line of next.lines) say(`${line}\n`);
  };
  // Polled: the view must survive the functions' pods coming and going, and a watch gains nothing at this rate.
  const timer = setInterval(() => void observe().catch((err: unknown) => say(`live view: ${String(err)}\n`)), 1000);
  stops.push(async () => clearInterval(timer));
}

/**
 * Zipkin on localhost:9411 and the trace sink the in-cluster collector sends
 * to (on every address: pods reach it through the node's bridge), forwarding
 * each batch to Zipkin.
 */
async function startViewer(): Promise<TraceSink> {
  const zipkin = await track(startZipkin({ progress, signal: aborter.signal }), (z) => z.stop());
  let lastError = '';
  const forward = zipkinForwarder(zipkin.url, (message) => {
    if (message !== lastError) say(`trace viewer: ${message}\n`);
    lastError = message;
  });
  return track(startTraceSink({ host: '0.0.0.0', onSpans: forward }), (sink) => sink.close());
}

main().catch((err: unknown) => {
  if (stopping) return;
  process.stderr.write(`swarm start: ${err instanceof Error ? err.message : String(err)}\n`);
  void stopAll(1);
});
