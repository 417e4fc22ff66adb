// npm start: the whole system on one machine. Builds (first run) and starts the
// embedded control plane, installs the CRD and the sample Swarm, runs the
// functions behind a local broker fed by the real ApiServerSource adapter, and
// shows a live view: one line per reconcile or handoff step that changed
// something, the shares when they change (dev/live-view.ts). The functions'
// logs and span trees go to .swarm/start.log. Ctrl-C (or SIGTERM, SIGHUP)
// stops what it started, whatever stdout is (dev/shutdown.ts).
//
// `npm start -- --knative`: the same cluster with real Knative Serving and
// Eventing (and Traefik) instead of the local stand-ins, Swarm deployed with
// `npm run deploy` and its own image, the live view from what it observes
// (dev/observed-view.ts). About a minute longer to start; the default keeps the
// local stand-ins because its view can show every delivery and the functions
// run as host processes a person can debug.
import { openSync, writeSync, mkdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import pinoPretty from 'pino-pretty';
import { keyString } from '../lib/decisions/routing.js';
import { createK8sClient, loadKubeConfig } from '../lib/kube/k8s-client.js';
import type { SwarmView } from '../lib/introspection/view.js';
import { createLogger } from '../lib/observability/logger.js';
import { readSwarmView, swarmViewOf } from '../functions/introspection-read.js';
import { ALL_TOOLS } from '../test/controlplane/build.js';
import { defaultWorkDir, ensureBuilt, healthyCluster, linkBinaries, startCluster, type Cluster } from '../test/controlplane/cluster.js';
import { enableNamespace, installSwarm, kubectl, startLocalKnative, type LocalKnative } from '../test/harness/local-knative.js';
import { applySample, deploySwarmOnKnative, installKnative, SYSTEM_NAMESPACE } from '../test/harness/real-knative.js';
import { ensureWorkerImage } from '../test/harness/worker-image.js';
import { withWorkerImage } from '../test/harness/worker-pool.js';
import type { Delivery } from './broker/local-broker.js';
import { liveView, stepFromDelivery, type ViewState } from './live-view.js';
import { observedView, type ObservedMemory } from './observed-view.js';
import { resyncPeriodMs } from './resync-timer.js';
import { say, stopOnSignals } from './shutdown.js';
import { TracePrinter } from './trace-printer.js';

const SAMPLE_NAMESPACE = 'swarm';
const LOG_FILE = join(defaultWorkDir, 'start.log');
const tty = process.stdout.isTTY === true;
const bold = (text: string) => (tty ? `\x1b[1m${text}\x1b[0m` : text);
const progress = (line: string) => say(`${bold('▸')} ${line}\n`);
const clock = () => new Date().toTimeString().slice(0, 8);

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

/** Feeds the live view, one delivery at a time, in the order the broker reports them. */
function liveViewPrinter(kubeconfig: string): (d: Delivery) => void {
  const read = readSwarmView(createK8sClient(loadKubeConfig(kubeconfig)));
  let state: ViewState = {};
  let queue = Promise.resolve();
  const render = async (d: Delivery, time: string) => {
    const step = stepFromDelivery(d, time);
    const views: Record<string, SwarmView> = {};
    for (const { swarm } of step.swarms) {
      const [namespace = '', name = ''] = swarm.split('/');
      const view = await read(namespace, name).catch(() => undefined);
      if (view) views[keyString({ namespace, name })] = view;
    }
    const next = liveView(state, step, views);
    state = next.state;
    for (const line of next.lines) say(`${line}\n`);
  };
  return (d) => {
    if (stopping) return;
    const time = clock();
    queue = queue.then(() => render(d, time)).catch((err: unknown) => say(`live view: ${String(err)}\n`));
  };
}

async function main(): Promise<void> {
  mkdirSync(defaultWorkDir, { recursive: true });
  const logFd = openSync(LOG_FILE, 'w');
  progress(`logs and span trees of the functions: ${relative(process.cwd(), LOG_FILE) || LOG_FILE}`);
  progress('building the control plane if needed (first run: several minutes, cached afterwards)');
  await ensureBuilt((line) => progress(line), ALL_TOOLS);
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
  if (process.argv.includes('--knative')) return startOnKnative(cluster, kubeconfig, running !== undefined);
  progress('Knative: the local stand-ins (a local broker, the functions as host processes: every delivery in the view); `npm start -- --knative` for real Serving + Eventing');
  progress('building the worker image from the Dockerfile if needed (first run: a few minutes), importing it into the node');
  const workerImage = await ensureWorkerImage(cluster, (l) => progress(l));

  progress('installing the Swarm CRD and identities (knative/base), then the sample (knative/samples)');
  await installSwarm(kubeconfig);
  await enableNamespace(kubeconfig, SAMPLE_NAMESPACE);

  const log = createLogger({
    name: 'swarm',
    level: process.env.LOG_LEVEL ?? 'info',
    destination: pinoPretty({ destination: logFd, sync: true, colorize: false, ignore: 'pid,hostname,trace_flags' }),
  });
  const traces = new TracePrinter({ out: { write: (text: string) => writeSync(logFd, text) } });
  const local: LocalKnative = await track(
    startLocalKnative({
      adminKubeconfig: kubeconfig,
      namespace: SAMPLE_NAMESPACE,
      workDir: join(defaultWorkDir, 'local-knative'),
      onDelivery: liveViewPrinter(kubeconfig),
      hostExtras: { log, spanProcessors: [traces] },
      // The PingSource's periodic resync (knative/base/pingsource.yaml), through the local broker.
      resyncEveryMs: resyncPeriodMs(),
    }),
    (l) => l.stop(),
  );
  // The sample as `kubectl apply -k knative/samples` renders it, its workers running the image built here.
  const sample = await kubectl(kubeconfig, ['kustomize', join('knative', 'samples')]);
  await kubectl(kubeconfig, ['apply', '-f', '-'], withWorkerImage(sample, workerImage));

  const assignPort = local.hosts.assign[0]?.port;
  progress(`broker ${local.brokerUrl}  assign :${assignPort}  restart :${local.hosts.restart[0]?.port}`);
  say(
    [
      'try, in another terminal:',
      `    .swarm/bin/kubectl --kubeconfig .swarm/kubeconfig -n ${SAMPLE_NAMESPACE} scale sts/swarm-worker --replicas 3`,
      `    .swarm/bin/kubectl --kubeconfig .swarm/kubeconfig -n ${SAMPLE_NAMESPACE} get swm`,
      `    curl -H 'Accept: text/html' http://127.0.0.1:${assignPort}/swarms/${SAMPLE_NAMESPACE}/swarm-worker`,
      'Ctrl-C stops everything npm start started. Each step that changes something follows:',
      '',
    ].join('\n'),
  );
}

/** Real Knative Serving + Eventing + Traefik, Swarm deployed the user's way, the sample, then the observed view. */
async function startOnKnative(cluster: Cluster | string, kubeconfig: string, reused: boolean): Promise<void> {
  progress('installing Knative Serving + Eventing + Traefik from the images `npm run knative:images` builds (first run: about 30 minutes, cached afterwards)');
  const installed = await installKnative(cluster, { kubeconfig, progress });
  progress('deploying Swarm with `npm run deploy` and its image built from the Dockerfile');
  const deployed = await deploySwarmOnKnative(cluster, installed, { kubeconfig, progress, watchNamespaces: [SAMPLE_NAMESPACE] });
  await applySample(kubeconfig, deployed.workerImage);
  if (reused) stops.push(async () => progress('Knative and Swarm stay installed on the reused cluster (`npm run undeploy` removes Swarm)'));
  const kubectlHint = '.swarm/bin/kubectl --kubeconfig .swarm/kubeconfig';
  say(
    [
      'try, in another terminal:',
      `    ${kubectlHint} -n ${SAMPLE_NAMESPACE} scale swm/swarm-worker --replicas 3`,
      `    ${kubectlHint} -n ${SAMPLE_NAMESPACE} get swm`,
      `    ${kubectlHint} -n ${SYSTEM_NAMESPACE} get ksvc,broker,trigger,apiserversource,pingsource`,
      'The functions scale to zero when idle; a change wakes assign through the activator. Ctrl-C stops everything npm start started.',
      '',
    ].join('\n'),
  );
  const kube = createK8sClient(loadKubeConfig(kubeconfig));
  const viewOf = swarmViewOf(kube);
  const functions = ['swarm-assign', 'swarm-restart'];
  let memory: ObservedMemory = {};
  const observe = async () => {
    const [swarm, ...pods] = await Promise.all([
      kube.getSwarm(SAMPLE_NAMESPACE, 'swarm-worker'),
      ...functions.map((fn) => kube.listPods(SYSTEM_NAMESPACE, `serving.knative.dev/service=${fn}`)),
    ]);
    const view = swarm ? await viewOf(swarm) : undefined;
    const functionPods = Object.fromEntries(functions.map((fn, i) => [fn, pods[i]!.filter((p) => !p.terminating).length]));
    const next = observedView(memory, { time: clock(), swarm: `${SAMPLE_NAMESPACE}/swarm-worker`, status: swarm?.status, ...(view ? { view } : {}), functionPods });
    memory = next.memory;
    for (const line of next.lines) say(`${line}\n`);
  };
  // Polled: the view must survive the functions' pods coming and going, and a watch gains nothing at this rate.
  const timer = setInterval(() => void observe().catch((err: unknown) => say(`live view: ${String(err)}\n`)), 1000);
  stops.push(async () => clearInterval(timer));
}

main().catch((err: unknown) => {
  if (stopping) return;
  process.stderr.write(`swarm start: ${err instanceof Error ? err.message : String(err)}\n`);
  void stopAll(1);
});
