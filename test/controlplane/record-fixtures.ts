// `npm run fixtures:record`: records real ApiServerSource CloudEvents as unit
// test fixtures. Starts a throwaway local cluster and the real receive
// adapter (Resource mode, then Reference mode) with a local HTTP sink, adds,
// updates and deletes a Swarm, a StatefulSet and a Pod, and writes each
// first matching HTTP request, exactly as received (binary content mode:
// ce-* headers + body), to test/fixtures/apiserversource/<mode>-<kind>-<verb>.json.
import * as k8s from '@kubernetes/client-node';
import { execFile } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { EventMode, WatchedResource } from './adapter.js';
import { startApiServerSourceAdapter } from './adapter.js';
import { readPins } from './build.js';
import { binPath, defaultWorkDir, ensureBuilt, repoRoot, startCluster } from './cluster.js';

const run = promisify(execFile);
const fixturesDir = join(repoRoot, 'test', 'fixtures', 'apiserversource');
const swarmCrd = join(repoRoot, 'knative', 'base', 'swarm-crd.yaml');

/** What knative/base/apiserversource.yaml watches: Swarms, StatefulSets, worker Pods. */
const resources: readonly WatchedResource[] = [
  { group: 'k8slab.info', version: 'v1alpha1', resource: 'swarms' },
  { group: 'apps', version: 'v1', resource: 'statefulsets' },
  { group: '', version: 'v1', resource: 'pods', labelSelector: 'k8slab.info/swarm' },
];

type Kind = 'swarm' | 'statefulset' | 'pod';
type Verb = 'add' | 'update' | 'delete';

interface RecordedRequest {
  readonly method: string;
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** The kind and object name an event is about, from its ce-type and subject. */
function classify(
  request: RecordedRequest,
): { mode: EventMode; verb: Verb; kind: Kind | undefined; name: string | undefined } | undefined {
  const type = /^dev\.knative\.apiserver\.(resource|ref)\.(add|update|delete)$/.exec(request.headers['ce-type'] ?? '');
  if (!type) return undefined;
  const mode: EventMode = type[1] === 'ref' ? 'Reference' : 'Resource';
  const verb = type[2];
  const subject = request.headers['ce-subject'] ?? '';
  // Subjects look like /apis/apps/v1/namespaces/<ns>/statefulsets/<name>.
  const match = /\/(swarms|statefulsets|pods)\/([^/]+)$/.exec(subject);
  const kinds: Record<string, Kind> = { swarms: 'swarm', statefulsets: 'statefulset', pods: 'pod' };
  return { mode, verb: verb as Verb, kind: match ? kinds[match[1] ?? ''] : undefined, name: match?.[2] };
}

class Sink {
  readonly received: RecordedRequest[] = [];
  private server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const headers: Record<string, string> = {};
      for (const [key, value] of Object.entries(req.headers)) {
        if (typeof value === 'string') headers[key] = value;
      }
      this.received.push({ method: req.method ?? '', path: req.url ?? '', headers, body });
      res.writeHead(202).end();
    });
  });

  async listen(): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const address = this.server.address();
    if (!address || typeof address === 'string') throw new Error('sink has no port');
    return `http://127.0.0.1:${address.port}/`;
  }

  async waitFor(what: string, match: (r: RecordedRequest) => boolean, limitMs = 60_000): Promise<RecordedRequest> {
    const deadline = Date.now() + limitMs;
    for (;;) {
      const found = this.received.find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no event for ${what} within ${limitMs / 1000}s`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

const is = (mode: EventMode, kind: Kind, verb: Verb, name: string) => (r: RecordedRequest) => {
  const c = classify(r);
  return c?.mode === mode && c.kind === kind && c.verb === verb && c.name === name;
};

async function recordMode(kubeconfig: string, sink: Sink, sinkUrl: string, mode: EventMode): Promise<Record<string, RecordedRequest>> {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(k8s.CoreV1Api);
  const apps = kc.makeApiClient(k8s.AppsV1Api);
  const custom = kc.makeApiClient(k8s.CustomObjectsApi);
  const namespace = `fixtures-${mode.toLowerCase()}`;
  // Each mode starts from an empty inbox: its objects reuse the same names.
  sink.received.length = 0;
  await core.createNamespace({
    body: { metadata: { name: namespace, labels: { 'k8slab.info/swarm-enabled': 'true' } } },
  });
  const adapter = await startApiServerSourceAdapter({
    kubeconfig,
    sink: sinkUrl,
    mode,
    resources,
    namespace,
    name: 'swarm',
    logDir: join(defaultWorkDir, 'logs'),
  });
  const swarms = { group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace };
  try {
    // The adapter emits nothing for objects that exist before its watches
    // start, so poke a warm-up Swarm until an event shows the watches are up.
    await custom.createNamespacedCustomObject({ ...swarms, body: swarm('warm-up', ['job-a']) });
    for (let i = 0; !sink.received.some((r) => classify(r)?.name === 'warm-up'); i++) {
      if (i > 120) throw new Error(`the adapter sent nothing; see ${adapter.logFile}`);
      await patchMerge(kubeconfig, namespace, 'swarm', 'warm-up', { metadata: { annotations: { poke: String(i) } } });
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));

    const recorded: Record<string, RecordedRequest> = {};
    const record = async (kind: Kind, verb: Verb, name: string) => {
      recorded[`${mode.toLowerCase()}-${kind}-${verb}`] = await sink.waitFor(`${mode} ${kind} ${verb}`, is(mode, kind, verb, name));
    };

    await custom.createNamespacedCustomObject({ ...swarms, body: swarm('demo', ['job-a', 'job-b']) });
    await record('swarm', 'add', 'demo');
    await patchMerge(kubeconfig, namespace, 'swarm', 'demo', { spec: { workload: { jobs: ['job-a', 'job-b', 'job-c'] } } });
    await record('swarm', 'update', 'demo');

    const labels = { app: 'demo-worker', 'k8slab.info/swarm': 'demo' };
    await apps.createNamespacedStatefulSet({
      namespace,
      body: {
        metadata: { name: 'demo-worker', labels },
        spec: {
          replicas: 1,
          serviceName: 'demo-worker',
          selector: { matchLabels: labels },
          template: { metadata: { labels }, spec: { containers: [{ name: 'worker', image: 'registry.invalid/swarm-worker:fixtures' }] } },
        },
      },
    });
    await record('statefulset', 'add', 'demo-worker');
    await record('pod', 'add', 'demo-worker-0');
    // Status updates from the StatefulSet controller and kwok (Running, Ready).
    await record('statefulset', 'update', 'demo-worker');
    await record('pod', 'update', 'demo-worker-0');

    await core.deleteNamespacedPod({ namespace, name: 'demo-worker-0' });
    await record('pod', 'delete', 'demo-worker-0');
    await apps.deleteNamespacedStatefulSet({ namespace, name: 'demo-worker' });
    await record('statefulset', 'delete', 'demo-worker');
    await custom.deleteNamespacedCustomObject({ ...swarms, name: 'demo' });
    await record('swarm', 'delete', 'demo');
    return recorded;
  } finally {
    await adapter.stop();
  }
}

function swarm(name: string, jobs: string[]): object {
  return {
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name },
    spec: { statefulSetName: 'demo-worker', configMapName: 'demo-worker-config', workload: { jobs } },
  };
}

async function patchMerge(kubeconfig: string, namespace: string, resource: string, name: string, patch: object): Promise<void> {
  await run(binPath('kubectl'), [
    '--kubeconfig', kubeconfig, '-n', namespace, 'patch', resource, name, '--type=merge', '-p', JSON.stringify(patch),
  ]);
}

async function main(): Promise<void> {
  await ensureBuilt(undefined, ['etcd', 'kubernetes', 'kwok', 'knative']);
  const cluster = await startCluster({
    workDir: join(defaultWorkDir, `fixtures-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
  });
  const sink = new Sink();
  try {
    await run(binPath('kubectl'), ['--kubeconfig', cluster.kubeconfigPath, 'apply', '-f', swarmCrd]);
    await run(binPath('kubectl'), [
      '--kubeconfig', cluster.kubeconfigPath, 'wait', '--for=condition=Established', 'crd/swarms.k8slab.info', '--timeout=60s',
    ]);
    const sinkUrl = await sink.listen();
    await mkdir(fixturesDir, { recursive: true });
    const pins = readPins();
    for (const mode of ['Resource', 'Reference'] as const) {
      const recorded = await recordMode(cluster.kubeconfigPath, sink, sinkUrl, mode);
      for (const [name, request] of Object.entries(recorded)) {
        const fixture = {
          $comment: `Recorded by \`npm run fixtures:record\` from knative.dev/eventing ${pins.knativeEventing} apiserver_receive_adapter against kubernetes ${pins.kubernetes}; do not edit by hand.`,
          ...request,
        };
        await writeFile(join(fixturesDir, `${name}.json`), JSON.stringify(fixture, null, 2) + '\n');
        process.stderr.write(`[fixtures] wrote ${name}.json (${request.headers['ce-type']})\n`);
      }
    }
  } finally {
    await sink.close();
    await cluster.stop();
  }
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  },
);
