// Swarm as a user runs it, for the end-to-end files: real Knative (Serving,
// Eventing, Traefik) on the run's cluster, Swarm deployed with `npm run deploy`
// and its image built from the Dockerfile, events taking the real path
// (ApiServerSource → Broker → Triggers → the Knative Services). A test file
// enables its own namespace (the labels and bindings `--watch-namespace`
// gives), and talks to Swarm only as a user can: kubectl, synthetic
// CloudEvents posted to the Broker's ingress (the resync ping the PingSource
// sends every five minutes, duplicates, replays), and what Knative shows (the
// dead-letter Service's log, the events a Trigger of its own receives).
//
// Deployed once per cluster: the first file to ask installs (or, on a fresh
// cluster, waits for the install the global setup started in the background)
// and deploys; later files find it Ready and running the current image.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HTTP, type CloudEvent } from 'cloudevents';
import { resyncPingEvent } from '../../lib/events/ping.js';
import { NODE_IP } from '../controlplane/node-config.js';
import { ensureImages } from '../image/build.js';
import { awaitKnativeInBackground } from './knative-background.js';
import { enableNamespace } from './swarm-install.js';
import { deploySwarmOnKnative, eventDisplayImageName, installKnative, kubectl, SYSTEM_NAMESPACE, waitReady, type InstalledKnative, type Progress } from './real-knative.js';

/** knative/base/broker.yaml's Broker, in SYSTEM_NAMESPACE. */
export const SWARM_BROKER = 'swarm';
const DEAD_LETTER = 'swarm-dead-letter';
/** The Knative Services of Swarm's functions (knative/base/services.yaml). */
const FUNCTIONS = ['swarm-assign', 'swarm-restart'] as const;

export interface SwarmOnKnative {
  readonly kubeconfig: string;
  /** The MT broker's ingress, http://<its ClusterIP> (the host reaches ClusterIPs through kube-proxy). */
  readonly ingress: string;
  /** The worker image built from the Dockerfile, imported into the node. */
  readonly workerImage: string;
  /** Posts `event` to Swarm's Broker, as a user's synthetic CloudEvent; throws unless the ingress took it (202). */
  publish(event: CloudEvent<unknown>): Promise<void>;
  /** The resync ping for `namespace` (what its PingSource sends every five minutes), now. */
  pingNow(namespace: string): Promise<void>;
  /** Pings `namespace` every `everyMs` until stopped (the PingSource's period is a minute at least). */
  pinging(namespace: string, everyMs: number): { stop(): void };
  /**
   * The events the dead-letter Service (Knative's event_display) logged since it started, each as its id, type and
   * the function's answer (Knative's knativeerrorcode and knativeerrordata), so a failure says why;
   * with `namespace`, only those about it (an ApiServerSource event's `namespace` extension, a ping's data):
   * files share the cluster, and another file's trouble is not this one's failure.
   */
  deadLetters(namespace?: string): Promise<string[]>;
}

const say = (progress?: Progress): Progress => progress ?? ((line) => process.stderr.write(`[swarm-on-knative] ${line}\n`));

/** What installKnative returns, for a cluster where it already ran (the event_display image is imported by it). */
const alreadyInstalled = (): InstalledKnative => ({ eventDisplayImage: eventDisplayImageName() });

async function knativeInstalled(kubeconfig: string): Promise<boolean> {
  const out = await kubectl(kubeconfig, ['get', 'deployments', '-n', 'knative-eventing', '--ignore-not-found', '-o', 'name']).catch(() => '');
  return out.includes('mt-broker-ingress');
}

/** The image the Knative Service swarm-assign is asked to run (Ready or not: a deploy in flight is not redone). */
async function deployedImage(kubeconfig: string): Promise<string | undefined> {
  const out = await kubectl(kubeconfig, ['get', 'ksvc', 'swarm-assign', '-n', SYSTEM_NAMESPACE, '--ignore-not-found', '-o', 'jsonpath={.spec.template.spec.containers[0].image}']).catch(() => '');
  return out.trim() || undefined;
}

/**
 * Swarm on real Knative on the cluster behind `kubeconfig`, deployed if it is
 * not (or runs another image): waits for the global setup's background install
 * when `background` names one, installs Knative itself if it is missing.
 */
export async function swarmOnKnative(options: {
  kubeconfig: string;
  workDir: string;
  background?: { dir: string } | null;
  progress?: Progress;
}): Promise<SwarmOnKnative> {
  const { kubeconfig, workDir } = options;
  const progress = say(options.progress);
  const background = options.background ? await awaitKnativeInBackground(options.background.dir, progress) : undefined;
  const { functions, worker } = await ensureImages(progress);
  if ((await deployedImage(kubeconfig)) !== functions.name) {
    const installed = background ?? ((await knativeInstalled(kubeconfig)) ? alreadyInstalled() : await installKnative(workDir, { kubeconfig, progress }));
    await deploySwarmOnKnative(workDir, installed, { kubeconfig, progress, watchNamespaces: [] });
  }
  await waitReady(kubeconfig, SYSTEM_NAMESPACE, 'ksvc', ['swarm-assign', 'swarm-restart', 'swarm-dead-letter'], progress);
  await waitReady(kubeconfig, SYSTEM_NAMESPACE, 'broker', [SWARM_BROKER], progress);
  const ingress = `http://${(await kubectl(kubeconfig, ['get', 'service', 'broker-ingress', '-n', 'knative-eventing', '-o', 'jsonpath={.spec.clusterIP}'])).trim()}`;
  const publish = async (event: CloudEvent<unknown>): Promise<void> => {
    const status = await postEvent(`${ingress}/${SYSTEM_NAMESPACE}/${SWARM_BROKER}`, event);
    if (status !== 202) throw new Error(`the broker ingress answered ${status} to ${event.type} ${event.id}`);
  };
  return {
    kubeconfig,
    ingress,
    workerImage: worker.name,
    publish,
    pingNow: (namespace) => publish(resyncPingEvent({ namespace })),
    pinging(namespace, everyMs) {
      const timer = setInterval(() => void publish(resyncPingEvent({ namespace })).catch((error: unknown) => progress(`ping ${namespace}: ${String(error)}`)), everyMs);
      return { stop: () => clearInterval(timer) };
    },
    deadLetters: (namespace) => deadLetterIds(kubeconfig, namespace),
  };
}

/**
 * Lets the deployed Swarm act in `namespace` (creates it): the label its
 * ApiServerSource selects and the functions' RoleBindings
 * (knative/namespace-access); then waits until the source watches it (its
 * controller rolls the adapter out anew for each namespace it gains or loses;
 * until then no event comes from there).
 */
export async function serveNamespace(kubeconfig: string, namespace: string, progress?: Progress): Promise<void> {
  await enableNamespace(kubeconfig, namespace);
  await untilSourceWatches(kubeconfig, namespace, true, progress);
  await untilCanaryArrives(kubeconfig, namespace, progress);
}

/**
 * A rolled-out adapter may still be listing: it lists each resource of each
 * namespace before watching it (client-side throttled), and what changes
 * before its list sends no event (a listed object is no event either). So a
 * canary: a ConfigMap the source selects (the last resource of
 * knative/base/apiserversource.yaml, listed last), touched until its event
 * reaches a Trigger of the test's own; then the namespace's watches are live.
 */
async function untilCanaryArrives(kubeconfig: string, namespace: string, progress?: Progress, timeoutMs = 120_000): Promise<void> {
  const started = Date.now();
  const recorder = await recordBrokerEvents(kubeconfig, `canary-${namespace}`.slice(0, 63), progress);
  const name = 'swarm-source-canary';
  try {
    await kubectl(kubeconfig, ['-n', namespace, 'create', 'configmap', name]);
    for (let touch = 0; ; touch++) {
      await kubectl(kubeconfig, ['-n', namespace, 'label', 'configmap', name, '--overwrite', 'app.kubernetes.io/managed-by=swarm', `k8slab.info/canary=${touch}`]);
      const deadline = Date.now() + 3000;
      while (Date.now() < deadline) {
        if (recorder.events.some((e) => String(e.subject ?? '').endsWith(`/namespaces/${namespace}/configmaps/${name}`))) {
          say(progress)(`events flow from ${namespace} (after ${((Date.now() - started) / 1000).toFixed(1)} s)`);
          return;
        }
        await new Promise((r) => setTimeout(r, 250));
      }
      if (Date.now() - started > timeoutMs) throw new Error(`no event from namespace ${namespace} reached the Broker in ${timeoutMs / 1000} s`);
    }
  } finally {
    await recorder.stop();
    await kubectl(kubeconfig, ['-n', namespace, 'delete', 'configmap', name, '--ignore-not-found']).catch(() => undefined);
  }
}

/**
 * The end of a file's namespace: unlabelled first, and deleted once the
 * source's adapter no longer watches it. Deleted while selected, it would roll
 * the adapter out again when it finally goes, under the next file's tests, and
 * what changes there while the new adapter lists sends no event.
 */
export async function releaseNamespace(kubeconfig: string, namespace: string, progress?: Progress): Promise<void> {
  await kubectl(kubeconfig, ['label', 'namespace', namespace, 'k8slab.info/swarm-enabled-']).catch(() => undefined);
  await untilSourceWatches(kubeconfig, namespace, false, progress).catch((error: unknown) => say(progress)(String(error)));
  await kubectl(kubeconfig, ['delete', 'namespace', namespace, '--wait=false']).catch(() => undefined);
}

/**
 * Waits until the ApiServerSource's adapter, rolled out, watches `namespace`
 * (or, `watching` false, no longer does); Swarm installed in `installedIn`.
 */
export async function untilSourceWatches(kubeconfig: string, namespace: string, watching: boolean, progress?: Progress, timeoutMs = 180_000, installedIn = SYSTEM_NAMESPACE): Promise<void> {
  const started = Date.now();
  for (;;) {
    const list = JSON.parse(await kubectl(kubeconfig, ['get', 'deployments', '-n', installedIn, '-l', 'eventing.knative.dev/sourceName=swarm', '-o', 'json'])) as {
      items: {
        metadata: { generation?: number };
        spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
        status: { observedGeneration?: number; updatedReplicas?: number; replicas?: number; availableReplicas?: number };
      }[];
    };
    const done = list.items.length > 0 && list.items.every((d) => {
      const config = d.spec.template.spec.containers.flatMap((c) => c.env ?? []).find((e) => e.name === 'K_SOURCE_CONFIG')?.value ?? '{}';
      const watches = ((JSON.parse(config) as { namespaces?: string[] }).namespaces ?? []).includes(namespace);
      const st = d.status;
      const rolledOut = st.observedGeneration === d.metadata.generation && st.updatedReplicas === st.replicas && st.availableReplicas === st.replicas;
      return watches === watching && rolledOut;
    });
    if (done) {
      say(progress)(`the ApiServerSource ${watching ? 'watches' : 'no longer watches'} ${namespace} (after ${((Date.now() - started) / 1000).toFixed(1)} s)`);
      return;
    }
    if (Date.now() - started > timeoutMs) throw new Error(`the ApiServerSource's adapter did not ${watching ? 'take' : 'drop'} namespace ${namespace} in ${timeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/**
 * Posts `event` in binary mode to a Broker's ingress path; answers the ingress's status (202: taken).
 * The InMemoryChannel dispatches synchronously (its async-handler annotation is off by default), so
 * the ingress answers only once every Trigger's delivery is done — a function's reply included,
 * delivered on to `restart`, which may be starting from zero on a busy node: a minute, not seconds.
 */
export async function postEvent(url: string, event: CloudEvent<unknown>): Promise<number> {
  const message = HTTP.binary(event);
  const response = await fetch(url, {
    method: 'POST',
    headers: message.headers as Record<string, string>,
    body: typeof message.body === 'string' ? message.body : JSON.stringify(message.body),
    signal: AbortSignal.timeout(60_000),
  });
  await response.arrayBuffer();
  return response.status;
}

/**
 * The ids event_display logged, over every pod of the dead-letter Service still
 * there (the test deploy keeps one: min-scale 1, deploySwarmOnKnative), each
 * event a block from its "Context Attributes," line on (its Extensions and Data
 * follow); with `namespace`, the blocks naming it. Only what a function was
 * to receive: a test's own recorder Trigger (recordBrokerEvents) shares the
 * Broker's delivery, and the dispatcher names the refused destination
 * (`knativeerrordest`).
 */
async function deadLetterIds(kubeconfig: string, namespace?: string): Promise<string[]> {
  const logs = await kubectl(kubeconfig, ['logs', '-n', SYSTEM_NAMESPACE, '-l', `serving.knative.dev/service=${DEAD_LETTER}`, '-c', 'event-display', '--tail=-1', '--prefix=false']).catch(() => '');
  const about = (block: string) =>
    namespace === undefined || [...block.matchAll(/^\s+namespace: (.+)$/gm), ...block.matchAll(/"namespace":\s*"([^"]*)"/g)].some((m) => m[1]!.trim() === namespace);
  const forAFunction = (block: string) => {
    const dest = /^\s+knativeerrordest: (.+)$/m.exec(block)?.[1] ?? '';
    return dest === '' || FUNCTIONS.some((f) => dest.includes(f));
  };
  return logs
    .split(/^Context Attributes,$/m)
    .slice(1)
    .filter((block) => about(block) && forAFunction(block))
    .map((block) => {
      // The id, the type, and what the function answered (Knative's error extensions), so a failure says why.
      const attr = (name: string) => new RegExp(`^\\s+${name}: (.+)$`, 'm').exec(block)?.[1]?.trim();
      const data = attr('knativeerrordata');
      const decoded = data ? Buffer.from(data, 'base64').toString('utf8').slice(0, 300) : undefined;
      return [attr('id') ?? '?', attr('type'), attr('knativeerrorcode'), decoded].filter((x) => x !== undefined).join(' ');
    });
}

/** One event a function's pod logged as handled (answered 2xx): pino's `msg: "handled"` line with the event's id. */
export interface Handled {
  readonly service: string;
  readonly pod: string;
  readonly event: string;
  /** pino's `time` (ms since the epoch; the node shares this machine's clock). */
  readonly time: number;
}

/** What the function pods still there logged as handled: the functions' own word that an event reached them. */
export async function handledEvents(kubeconfig: string, services: readonly string[] = FUNCTIONS): Promise<Handled[]> {
  const handled: Handled[] = [];
  for (const service of services) {
    const logs = await kubectl(kubeconfig, ['logs', '-n', SYSTEM_NAMESPACE, '-l', `serving.knative.dev/service=${service}`, '-c', 'function', '--tail=-1', '--prefix', '--max-log-requests=20']).catch(() => '');
    for (const line of logs.split('\n')) {
      const m = /^\[pod\/([^/]+)\/[^\]]+\] (\{.*\})$/.exec(line);
      if (!m) continue;
      try {
        const entry = JSON.parse(m[2]!) as { msg?: string; event?: string; time?: number };
        if (entry.msg === 'handled' && entry.event) handled.push({ service, pod: m[1]!, event: entry.event, time: entry.time ?? 0 });
      } catch {
        // not one of the function's JSON lines
      }
    }
  }
  return handled;
}

export interface EventRecorder {
  /** Every event the Broker delivered to the recorder's Trigger, in arrival order. */
  readonly events: CloudEvent<unknown>[];
  stop(): Promise<void>;
}

/**
 * A Trigger of the test's own on Swarm's Broker (no filter: every event the
 * Broker takes), delivering to a server in this process that pods reach at the
 * node's bridge address: what the Broker saw, as Knative delivered it.
 */
export async function recordBrokerEvents(kubeconfig: string, name: string, progress?: Progress): Promise<EventRecorder> {
  const events: CloudEvent<unknown>[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        events.push(HTTP.toEvent({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') }) as CloudEvent<unknown>);
      } catch {
        // not a CloudEvent: nothing the Broker would send
      }
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '0.0.0.0', resolve));
  const port = (server.address() as AddressInfo).port;
  const trigger = {
    apiVersion: 'eventing.knative.dev/v1',
    kind: 'Trigger',
    metadata: { name, namespace: SYSTEM_NAMESPACE, labels: { 'app.kubernetes.io/part-of': 'swarm-tests' } },
    spec: { broker: SWARM_BROKER, subscriber: { uri: `http://${NODE_IP}:${port}/` } },
  };
  await kubectl(kubeconfig, ['apply', '-f', '-'], JSON.stringify(trigger));
  await waitReady(kubeconfig, SYSTEM_NAMESPACE, 'trigger', [name], say(progress));
  return {
    events,
    async stop() {
      await kubectl(kubeconfig, ['delete', 'trigger', name, '-n', SYSTEM_NAMESPACE, '--ignore-not-found']).catch(() => undefined);
      // Still answering while the broker's filter learns the Trigger is gone: a delivery refused
      // meanwhile would be retried and dead-lettered (the Broker's delivery applies to this Trigger too).
      await new Promise((r) => setTimeout(r, 1000));
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
