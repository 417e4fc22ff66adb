// npm run bench:knative — Swarm's functions on real Knative, cold and warm.
//
// On a fresh local cluster with the real node: Knative Serving + Eventing +
// Traefik and Swarm deployed the user's way (test/harness/real-knative.ts, as
// knative-e2e does, with its short scale-to-zero grace), the sample applied
// and converged. Then, N times: wait until swarm-assign has no pod, `kubectl
// scale swm` (cold: the activator holds the event while the revision scales
// from zero), and once the Swarm converged and assign is quiet, the same change
// back with assign up (warm). Each figure runs from the write (the PATCH of the
// Swarm's scale subresource `kubectl scale` sends, answered) to assign's own
// `handled` log line, and the cold one is cut into
// its parts from what this script's watches saw, the node's /proc and the
// function's log lines. Also: the functions image's size, and the memory of
// assign's container (cgroup v1, and the Node process's VmRSS/VmHWM). A
// benchmark, not a test: it asserts nothing about the numbers.
//
//   npm run bench:knative                 5 cold + 5 warm → bench/RESULTS.md (bench:knative)
//   npm run bench:knative -- --runs 2     fewer, to stdout only (--write: into RESULTS.md)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig, PatchStrategy, setHeaderOptions, Watch, type V1Deployment, type V1Pod } from '@kubernetes/client-node';
import type { Swarm } from '../lib/api/types.js';
import { defaultWorkDir, startCluster, type Cluster } from '../test/controlplane/cluster.js';
import { ensureImages } from '../test/image/build.js';
import { containerCgroup, containerPids, readText } from '../test/harness/node-containers.js';
import { applySample, deploySwarmOnKnative, installKnative, kubectl, SYSTEM_NAMESPACE } from '../test/harness/real-knative.js';
import { eventually } from '../test/support/timeline.js';
import { coldTable, dominantPart, logEntry, p50max, processStartMs, seconds, warmTable, writeBracket, type ColdRun, type WarmRun } from './knative-figures.js';
import { withSection } from './results-file.js';
import { measuredTree, realNodeMachine } from './run-info.js';

const SECTION = 'bench:knative';
const NS = 'swarm';
const SERVICE = 'swarm-assign';
const SELECTOR = `serving.knative.dev/service=${SERVICE}`;
const MINUTES = 60_000;
/** How long assign must have logged nothing before a warm change: what it answers first is then this change's event. */
const QUIET_MS = 5_000;

const argValue = (flag: string): string | undefined => {
  const at = process.argv.indexOf(flag);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const RUNS = Number(argValue('--runs') ?? 5);
if (!Number.isInteger(RUNS) || RUNS < 1) throw new Error(`--runs: a positive integer, not ${argValue('--runs')}`);
const toStdout = argValue('--runs') !== undefined && !process.argv.includes('--write');
const progress = (line: string) => process.stderr.write(`[bench:knative] ${new Date().toISOString().slice(11, 19)} ${line}\n`);
const TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** What the watches saw of assign's revision: its scale-ups from zero and each pod's first instants. */
interface PodSeen {
  readonly uid: string;
  readonly name: string;
  readonly createdAt: number;
  scheduledAt?: number;
  containerId?: string;
  readyAt?: number;
  gone?: boolean;
}
class AssignWatch {
  readonly scaleUps: number[] = [];
  readonly pods = new Map<string, PodSeen>();
  private readonly desired = new Map<string, number>();
  private readonly aborts: AbortController[] = [];

  static async start(kc: KubeConfig): Promise<AssignWatch> {
    const w = new AssignWatch();
    const watch = new Watch(kc);
    const noop = () => undefined;
    w.aborts.push(
      await watch.watch(`/apis/apps/v1/namespaces/${SYSTEM_NAMESPACE}/deployments`, { labelSelector: SELECTOR }, (_phase, d: V1Deployment) => w.onDeployment(d), noop),
      await watch.watch(`/api/v1/namespaces/${SYSTEM_NAMESPACE}/pods`, { labelSelector: SELECTOR }, (phase, p: V1Pod) => w.onPod(phase, p), noop),
    );
    return w;
  }

  private onDeployment(d: V1Deployment): void {
    const name = d.metadata?.name ?? '';
    const replicas = d.spec?.replicas ?? 0;
    if ((this.desired.get(name) ?? 0) === 0 && replicas > 0) this.scaleUps.push(Date.now());
    this.desired.set(name, replicas);
  }

  private onPod(phase: string, pod: V1Pod): void {
    const now = Date.now();
    const uid = pod.metadata?.uid ?? '';
    const seen = this.pods.get(uid) ?? { uid, name: pod.metadata?.name ?? '', createdAt: now };
    if (pod.spec?.nodeName && seen.scheduledAt === undefined) seen.scheduledAt = now;
    const id = pod.status?.containerStatuses?.find((c) => c.name === 'function')?.containerID;
    if (id) seen.containerId = id.replace(/^[a-z]+:\/\//, '');
    if (pod.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') && seen.readyAt === undefined) seen.readyAt = now;
    if (phase === 'DELETED' || pod.metadata?.deletionTimestamp) seen.gone = true;
    this.pods.set(uid, seen);
  }

  live(): PodSeen[] {
    return [...this.pods.values()].filter((p) => !p.gone);
  }

  stop(): void {
    this.aborts.forEach((a) => a.abort());
  }
}

/** The function container's cgroup directory on this node. */
const containerCgroupOf = (pod: PodSeen): string | undefined => (pod.containerId ? containerCgroup(pod.uid, pod.containerId) : undefined);

/** The container's main process (Node, pid 1 inside it). */
const containerPid = (pod: PodSeen): number | undefined => (pod.containerId ? containerPids(pod.uid, pod.containerId)[0] : undefined);

interface Memory {
  readonly usage: number;
  readonly maxUsage: number;
  readonly rss: number;
  readonly vmRss?: number;
  readonly vmHwm?: number;
}
function memoryOf(pod: PodSeen): Memory | undefined {
  const dir = containerCgroupOf(pod);
  if (!dir) return undefined;
  const num = (file: string) => Number(readText(join(dir, file))?.trim() ?? NaN);
  const stat = readText(join(dir, 'memory.stat')) ?? '';
  const rss = Number(/^total_rss (\d+)$/m.exec(stat)?.[1] ?? /^rss (\d+)$/m.exec(stat)?.[1] ?? NaN);
  const pid = containerPid(pod);
  const status = pid ? readText(`/proc/${pid}/status`) ?? '' : '';
  const kb = (key: string) => {
    const m = new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(status);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const vmRss = kb('VmRSS');
  const vmHwm = kb('VmHWM');
  return { usage: num('memory.usage_in_bytes'), maxUsage: num('memory.max_usage_in_bytes'), rss, ...(vmRss ? { vmRss } : {}), ...(vmHwm ? { vmHwm } : {}) };
}

function processStartOf(pod: PodSeen): number | undefined {
  const pid = containerPid(pod);
  const stat = pid ? readText(`/proc/${pid}/stat`) : undefined;
  const uptime = readText('/proc/uptime');
  return stat && uptime ? processStartMs(stat, uptime, Date.now(), TICKS) : undefined;
}

async function logsOf(kubeconfig: string, pod: string) {
  const text = await kubectl(kubeconfig, ['logs', '-n', SYSTEM_NAMESPACE, pod, '-c', 'function']).catch(() => '');
  return text.split('\n').flatMap((line) => logEntry(line) ?? []);
}

async function main(cluster: Cluster): Promise<string> {
  const kubeconfig = cluster.kubeconfigPath;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);

  const installed = await installKnative(cluster, { kubeconfig, progress: (l) => progress(`  ${l}`) });
  const deployed = await deploySwarmOnKnative(cluster, installed, { kubeconfig, progress: (l) => progress(`  ${l}`), watchNamespaces: [NS] });
  // The resync ping would wake assign: as knative-e2e, this run wants it idle.
  await kubectl(kubeconfig, ['patch', 'pingsource', 'swarm-resync-swarm', '-n', SYSTEM_NAMESPACE, '--type', 'merge', '-p', '{"spec":{"schedule":"0 0 1 1 *"}}']);
  const watch = await AssignWatch.start(kc);
  try {
    await applySample(kubeconfig, deployed.workerImage);
    progress('applied knative/samples; waiting for the Swarm to converge at 2');

    const converged = (replicas: number) =>
      eventually(
        `Swarm Running with ${replicas} acknowledging workers`,
        async () => {
          const s = (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS, name: 'swarm-worker' })) as Swarm;
          const st = s.status;
          return st?.phase === 'Running' &&
            st.readyReplicas === replicas &&
            st.uncoveredJobs === 0 &&
            st.observedGeneration === s.metadata?.generation &&
            st.workers?.length === replicas &&
            st.workers.every((w) => w.coverage === 'Acknowledged')
            ? true
            : undefined;
        },
        5 * MINUTES,
        500,
      );
    // What `kubectl scale swm` sends, from this process: the write lies between the request and its
    // answer, a few ms apart, where kubectl's return would add its own exit to it.
    const scale = async (replicas: number): Promise<{ requestedAt: number; writtenAt: number }> => {
      const requestedAt = Date.now();
      await custom.patchNamespacedCustomObjectScale(
        { group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace: NS, name: 'swarm-worker', body: { spec: { replicas } } },
        setHeaderOptions('Content-Type', PatchStrategy.MergePatch),
      );
      return { requestedAt, writtenAt: Date.now() };
    };
    /** The first `handled` line at or after `since` in any of `pods`' logs. */
    const firstAnswer = (pods: () => PodSeen[], since: number, what: string) =>
      eventually(
        what,
        async () => {
          const answers = (await Promise.all(pods().map((p) => logsOf(kubeconfig, p.name)))).flat().filter((e) => e.msg === 'handled' && e.time >= since);
          return answers.sort((a, b) => a.time - b.time)[0];
        },
        5 * MINUTES,
        300,
      );
    const atZero = () =>
      eventually(
        `${SERVICE} at 0 pods`,
        async () => {
          const pods = await core.listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: SELECTOR });
          return pods.items.length === 0 && watch.live().length === 0 ? true : undefined;
        },
        10 * MINUTES,
        500,
      );

    await converged(2);
    let replicas = 2;
    const cold: ColdRun[] = [];
    const warm: WarmRun[] = [];
    const coldMemory: Memory[] = [];
    const warmMemory: Memory[] = [];
    for (let i = 1; i <= RUNS; i++) {
      progress(`run ${i}/${RUNS}: waiting for ${SERVICE} to scale to zero`);
      await atZero();
      const target = replicas === 2 ? 3 : 2;
      const before = new Set(watch.pods.keys());
      const { requestedAt, writtenAt } = await scale(target);
      const fresh = () => [...watch.pods.values()].filter((p) => !before.has(p.uid));
      // The new pod, once its Node process exists: its start read from /proc while it lives.
      const pod = await eventually('a new assign pod with its process', async () => fresh().find((p) => containerPid(p) !== undefined), 5 * MINUTES, 100);
      const processStartAt = processStartOf(pod);
      const answer = await firstAnswer(fresh, requestedAt, 'the cold pod answered');
      const listeningAt = (await logsOf(kubeconfig, pod.name)).find((e) => e.msg === 'listening')?.time;
      const mem = memoryOf(pod);
      if (mem) coldMemory.push(mem);
      const run: ColdRun = {
        requestedAt,
        writtenAt,
        ...(watch.scaleUps.find((t) => t >= requestedAt) !== undefined ? { scaledUpAt: watch.scaleUps.find((t) => t >= requestedAt)! } : {}),
        podCreatedAt: pod.createdAt,
        ...(pod.scheduledAt !== undefined ? { scheduledAt: pod.scheduledAt } : {}),
        ...(processStartAt !== undefined ? { processStartAt } : {}),
        ...(listeningAt !== undefined ? { listeningAt } : {}),
        ...(answer.ms !== undefined ? { receivedAt: answer.time - answer.ms } : {}),
        answeredAt: answer.time,
      };
      cold.push(run);
      progress(
        `run ${i}: cold ${replicas}→${target}: write → scaled up ${seconds(run.scaledUpAt! - writtenAt)} s, pod ${seconds(pod.createdAt - writtenAt)} s, ` +
          `process ${seconds((processStartAt ?? NaN) - writtenAt)} s, listening ${seconds((listeningAt ?? NaN) - writtenAt)} s, answered ${seconds(answer.time - writtenAt)} s (${answer.type})`,
      );
      replicas = target;
      await converged(replicas);

      // Warm: assign up and quiet, the same change back.
      const back = replicas === 2 ? 3 : 2;
      await eventually(
        `${SERVICE} quiet for ${QUIET_MS / 1000} s, a pod Ready`,
        async () => {
          const live = watch.live().filter((p) => p.readyAt !== undefined);
          if (live.length === 0) throw new Error(`${SERVICE} went to zero before the warm change: raise the scale-to-zero grace`);
          const last = Math.max(0, ...(await Promise.all(live.map((p) => logsOf(kubeconfig, p.name)))).flat().map((e) => e.time));
          return Date.now() - last >= QUIET_MS ? true : undefined;
        },
        2 * MINUTES,
        500,
      );
      const up = () => watch.live();
      const { requestedAt: warmRequestedAt, writtenAt: warmAt } = await scale(back);
      const warmAnswer = await firstAnswer(up, warmRequestedAt, 'the warm pod answered');
      warm.push({ requestedAt: warmRequestedAt, writtenAt: warmAt, answeredAt: warmAnswer.time, ...(warmAnswer.ms !== undefined ? { handlerMs: warmAnswer.ms } : {}) });
      progress(`run ${i}: warm ${replicas}→${back}: answered ${seconds(warmAnswer.time - warmAt)} s (${warmAnswer.ms} ms in the function, ${warmAnswer.type})`);
      replicas = back;
      await converged(replicas);
      for (const p of watch.live()) {
        const m = memoryOf(p);
        if (m) warmMemory.push(m);
      }
    }
    return report(cold, warm, coldMemory, warmMemory, deployed.functionsImage, cluster);
  } finally {
    watch.stop();
  }
}

const mib = (bytes: number | undefined) => (bytes === undefined || Number.isNaN(bytes) ? '—' : (bytes / 2 ** 20).toFixed(1));

async function report(cold: ColdRun[], warm: WarmRun[], coldMemory: Memory[], warmMemory: Memory[], image: string, cluster: Cluster): Promise<string> {
  const { functions } = await ensureImages(() => undefined);
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfigPath);
  const nodes = await kc.makeApiClient(CoreV1Api).listNode();
  const onNode = nodes.items.flatMap((n) => n.status?.images ?? []).find((i) => i.names?.some((name) => name.endsWith(image.replace(/^docker\.io\//, ''))));
  const memRow = (what: string, ms: Memory[]) => {
    const f = (pick: (m: Memory) => number | undefined) => {
      const s = p50max(ms.map(pick));
      return s ? `${mib(s.p50)} / ${mib(s.max)}` : '—';
    };
    return `| ${what} (${ms.length}) | ${f((m) => m.vmRss)} | ${f((m) => m.vmHwm)} | ${f((m) => m.rss)} | ${f((m) => m.usage)} | ${f((m) => m.maxUsage)} |`;
  };
  const top = dominantPart(cold);
  const bracket = writeBracket([...cold, ...warm]);
  const whole = p50max(cold.map((r) => (r.answeredAt === undefined ? undefined : r.answeredAt - r.writtenAt)));
  const warmWhole = p50max(warm.map((r) => (r.answeredAt === undefined ? undefined : r.answeredAt - r.writtenAt)));
  return [
    '## Cold start and warm answers on real Knative (bench:knative)',
    '',
    `Command: \`npm run bench:knative\` (bench/knative.ts via tsx), this tree at ${measuredTree()}. Generated ${new Date().toISOString()}, ${Math.round((Date.now() - startedAt) / 1000)} s${nodeLockedAt !== undefined ? `, ${Math.round((nodeLockedAt - startedAt) / 1000)} s of it waiting for the real node` : ''}.`,
    realNodeMachine(),
    '',
    "Scenario: a fresh local cluster with the real node; Knative Serving + Eventing (MT channel broker, in-memory channel) + Traefik and Swarm deployed with `npm run deploy` (test/harness/real-knative.ts, as knative-e2e: the functions image built from the Dockerfile and imported into the node's containerd, so never pulled; scale-to-zero grace 6 s, stable window 6 s (test/harness/knative-stack/config.yaml); the resync PingSource pushed to once a year so assign can idle); the sample (`knative/samples`, policy None: each change staged through the ConfigMap, assign's reconcile also asking each changed pod's kubelet to deliver it) converged at 2 workers. " +
      `Then ${cold.length} times: wait until ${SERVICE} has no pod, scale the Swarm 2→3 or 3→2 (**cold**; the merge PATCH of its scale subresource that \`kubectl scale swm/swarm-worker\` sends, from the bench's process); once the Swarm converged (Running, every worker acknowledging) and assign logged nothing for ${QUIET_MS / 1000} s, the same change back (**warm**, assign up); converge again.`,
    '',
    `What each figure spans. Every instant is read on this machine's one clock. *write*: the PATCH's answer arrived (the write is in the API server; it was sent ${seconds(bracket?.p50)} s before, p50, max ${seconds(bracket?.max)}: the write lies in between). *answered*: the \`time\` of assign's \`handled\` log line (pino, after the reconcile, as the answer goes out) for the first event it handled after the write; the time the broker accepted the event is not observable here (its ingress does not log it), so the figures start at the write and include the ApiServerSource's watch and its POST to the broker. *Deployment scaled up*, *pod created*, *scheduled*: first seen by this script's watches (a few ms late). *Node process started*: the container's pid 1 from its memory cgroup, its start from /proc/<pid>/stat (10 ms ticks). *listening*: the function's \`listening\` log line; *event in the function*: that \`handled\` line's time less its \`ms\` (the request's time inside the function).`,
    '',
    ...coldTable(cold),
    '',
    ...warmTable(warm),
    '',
    `Memory of assign's \`function\` container, MiB, p50 / max over the pods read: *cold*, right after its first answer; *warm*, after each warm change converged. VmRSS/VmHWM of the Node process (/proc), rss = the memory cgroup's total_rss, usage/max = memory.usage_in_bytes / memory.max_usage_in_bytes (page cache included; its limit is 384Mi, knative/base/services.yaml). VmRSS also counts the file pages the process maps (the node binary, its libraries), which the cgroup counts as cache: the cgroup's rss is the process's own (anonymous) memory.`,
    '',
    '| assign container | VmRSS | VmHWM | cgroup rss | cgroup usage | cgroup max usage |',
    '| --- | ---: | ---: | ---: | ---: | ---: |',
    memRow('cold, after the first answer', coldMemory),
    memRow('warm', warmMemory),
    '',
    `Image: \`${functions.name}\`, OCI archive ${mib(functions.bytes)} MiB (test/image: the Dockerfile's \`functions\` target built by buildah), ${onNode?.sizeBytes !== undefined ? `${mib(onNode.sizeBytes)} MiB as the node reports it (node.status.images: containerd's CRI size, the image's content as stored, not its unpacked filesystem)` : 'not found in node.status.images'}.`,
    '',
    `Reading it: from zero, assign answered a change ${seconds(whole?.p50)} s (p50; max ${seconds(whole?.max)}) after the write, against ${seconds(warmWhole?.p50)} s (p50; max ${seconds(warmWhole?.max)}) warm.` +
      (top ? ` The largest part of the cold path is *${top.name}* (${seconds(top.p50)} s p50, ${Math.round(top.share * 100)} % of the whole): ${top.spans}.` : '') +
      " The function container's CPU limit is 500m (knative/base/services.yaml): Node loads its modules on half a core at most; this benchmark does not vary it." +
      " The image is already on the node here; a cluster that pulls it adds the pull between *scheduled* and *process started*. No peer: the original operator is a long-running controller, never scaled to zero, so it has no cold start to compare; its answer to a change is bench:coverage's business. One run of N changes; on a 2-core machine shared with other work the seconds move from run to run.",
  ].join('\n');
}

const startedAt = Date.now();
let nodeLockedAt: number | undefined;
const abort = new AbortController();
let cluster: Cluster | undefined;
let stopping: Promise<void> | undefined;
const stop = () => (stopping ??= (async () => {
  if (!cluster) return;
  progress('stopping the cluster');
  await cluster.stop();
  progress('cluster stopped');
})());
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: tearing down`);
    abort.abort();
    void stop().finally(() => process.exit(130));
  });
}

let body: string;
try {
  progress('starting the cluster (real node)');
  cluster = await startCluster({
    workDir: join(defaultWorkDir, `bench-knative-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
    onProgress: (line) => progress(`  ${line}`),
    // Others hold the one real node in turns: wait for it rather than fail.
    nodeLockTimeoutMs: 60 * MINUTES,
    onNodeLocked: () => (nodeLockedAt = Date.now()),
    signal: abort.signal,
  });
  body = await main(cluster);
} finally {
  await stop();
}
if (toStdout) process.stdout.write(body + '\n');
else {
  const file = new URL('RESULTS.md', import.meta.url);
  writeFileSync(file, withSection(existsSync(file) ? readFileSync(file, 'utf8') : '', SECTION, body));
  progress(`wrote bench/RESULTS.md (${SECTION})`);
}
