// npm run bench:coverage — what the design does to the jobs while the worker
// pool is created and resized, measured from the workers' own reports; with
// `--peer original`, the same script against the original operator too, on
// the same cluster, one after the other.
//
// On the local cluster with a real node, Swarm as a user runs it (real Knative
// Serving + Eventing, `npm run deploy`, its image built from the Dockerfile):
// the sample worker pool (the reference worker as real pods mounting the real
// ConfigMap) created under a Swarm over the 27 seed streams (the original: under
// its running controller, configured with the same jobs), then resized
// 2→3→4→1→3 three ways — `kubectl scale sts` with the sample as it ships
// (hot-reloading workers, policy None), `kubectl scale swm` with Swarm owning
// the count, and `kubectl scale sts` under policy Restart — once with the
// kubelet's default sync period and once with `syncFrequency: 10s`; then one
// worker crashed twice as it runs (the kubelet backs off the second restart). Per step,
// from the command until the workers' reports show them running what the
// ConfigMap assigns: uncovered and duplicate job-seconds
// (test/support/coverage-recorder), the time the config was written, the
// Swarm's status said it converged, the workers did, and the pods restarted.
// A benchmark, not a test: it asserts nothing about the numbers.
//
//   npm run bench:coverage                          both sync periods → bench/RESULTS.md (bench:coverage:current)
//   npm run bench:coverage -- --sync 10s            one sync period, to stdout only (--write: into RESULTS.md)
//   SWARM_ORIGINAL_GIT_DIR=<git dir> npm run bench:coverage -- --peer original
//                                                   the Swarm runs, then the original operator, per
//                                                   sync period → bench/RESULTS.md (bench:coverage:original)
//   … --systems swarm-owned,original                only these systems: a quick look, to stdout (--write: into RESULTS.md)
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import type { Swarm } from '../lib/api/types.js';
import { parse } from '../lib/workerconfig/index.js';
import { originalOperator, readPins } from '../test/controlplane/build.js';
import { defaultWorkDir, startCluster, type Cluster } from '../test/controlplane/cluster.js';
import { crashLoop } from '../test/harness/node-containers.js';
import { deploySwarmOnKnative, installKnative, kubectl, uninstallSwarmAndKnative } from '../test/harness/real-knative.js';
import { ORIGINAL_CRD_NAME, manifestIn, startOriginalOperator, withStatefulSetAppLabel, type RunningOriginalOperator } from '../test/harness/original-operator.js';
import { recordWorkerPool, sampleSwarmYaml, workerPoolYaml } from '../test/harness/worker-pool.js';
import type { WorkerPodsRecorder } from '../test/support/coverage-recorder/recorder.js';
import { seedStreams } from '../test/support/fixtures.js';
import { eventually } from '../test/support/timeline.js';
import { CURRENT_COVERAGE_SECTION, ORIGINAL_COVERAGE_SECTION } from './coverage-section.js';
import { assignmentDefects, fmt, podNames, runsAssignment, sideBySideTable, stepsTable, type Assignment, type StepResult } from './coverage-steps.js';
import { withSection } from './results-file.js';
import { measuredTree, realNodeMachine } from './run-info.js';

const SCALES = [3, 4, 1, 3];
/** After the resizes: a worker killed (SIGKILL, as an OOM kill) as it runs, twice. */
const CRASH_VICTIM = 'swarm-worker-1';
const CRASH_STEP = `${CRASH_VICTIM} crashed twice`;
const START_REPLICAS = 2;
const CONFIG_MAP = 'swarm-worker-config';
/** Longest a step may take before it is recorded as not converged (the default sync period is 1 min, plus jitter). */
const STEP_TIMEOUT_MS = 240_000;
/**
 * How long the workers must keep running the assignment before a step counts
 * as over: a system may still act after they first agree (the original
 * deletes its old workers 4 s × (1 + ordinal) after its 5 s conciliation tick,
 * when hot-reloading workers may already run the new share), and that belongs
 * to this step, not the next.
 */
const QUIET_MS = 25_000;
/** The Swarm systems' namespaces, watched by the one deploy of Swarm per cluster. */
const SWARM_NAMESPACES = ['bench-coverage-swarm', 'bench-coverage-swarm-owned', 'bench-coverage-swarm-restart'] as const;

const argValue = (flag: string): string | undefined => {
  const at = process.argv.indexOf(flag);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const syncArg = argValue('--sync');
const syncs: Array<string | undefined> = syncArg !== undefined ? [syncArg === 'default' ? undefined : syncArg] : [undefined, '10s'];
const peer = argValue('--peer');
if (peer !== undefined && peer !== 'original') throw new Error(`--peer: only "original" is known, not ${JSON.stringify(peer)}`);
const systemsArg = argValue('--systems')?.split(',');
const progress = (line: string) => process.stderr.write(`[bench:coverage] ${line}\n`);

type SwarmSystemName = 'swarm' | 'swarm-owned' | 'swarm-restart';
type SystemName = SwarmSystemName | 'original';
const SYSTEM_LABEL: Record<SystemName, string> = {
  swarm: 'Swarm, scale sts',
  'swarm-owned': 'Swarm, scale swm',
  'swarm-restart': 'Swarm (Restart), scale sts',
  original: 'original',
};
const unknownSystems = (systemsArg ?? []).filter((s) => !(s in SYSTEM_LABEL));
if (unknownSystems.length) throw new Error(`--systems: unknown ${unknownSystems.join(', ')}; choose from ${Object.keys(SYSTEM_LABEL).join(', ')}`);
/** Each Swarm system's Swarm: the sample's (hot-reloading workers, policy None), or workers restarted to load. */
const SWARM_SPEC: Record<SwarmSystemName, Parameters<typeof sampleSwarmYaml>[2]> = {
  swarm: { policy: 'None' },
  'swarm-owned': { policy: 'None', replicas: START_REPLICAS },
  'swarm-restart': { policy: 'Restart', handoff: 'BreakBeforeMake' },
};

interface Run {
  readonly system: SystemName;
  readonly sync: string;
  readonly image: string;
  readonly results: StepResult[];
}

/** What a system under test does around the common script. */
interface SystemUnderTest {
  readonly name: SystemName;
  readonly namespace: string;
  /**
   * Before the script, unmeasured: the system given the jobs, as a user would
   * before creating the pool (Swarm: the Swarm applied, and handled by assign;
   * the original: its controller started with them, in setup).
   */
  configure(): Promise<void>;
  /** The start step's action: the worker pool created at START_REPLICAS. */
  start(): Promise<void>;
  /** One resize of the script. */
  scale(replicas: number): Promise<void>;
  /** The version the Swarm's status says it converged at, once it does (Swarm only). */
  statusConverged?(afterVersion: number, replicas: number): Promise<number | undefined>;
  stop(): Promise<void>;
}

/** The common script: start at 2, then `kubectl scale sts` through SCALES, each step measured. */
async function runScript(kubeconfig: string, system: SystemUnderTest, recorder: WorkerPodsRecorder, label: string): Promise<StepResult[]> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const ns = system.namespace;
  /**
   * The ConfigMap's config.yml as the workers would read it; undefined while
   * missing, not yet valid (a placeholder) or mid-handoff (a staged handoff's
   * marks: lib/decisions/handoff.ts; the step is not over until they are gone).
   */
  const workerConfig = async (): Promise<{ version: number; assignment: Assignment } | undefined> => {
    const cm = await core.readNamespacedConfigMap({ name: CONFIG_MAP, namespace: ns }).catch(() => undefined);
    try {
      const config = parse(cm?.data?.['config.yml'] ?? '');
      if (Object.values(config.workloads).some((w) => w.releasing || w.awaiting || w.released)) return undefined;
      return { version: config.version, assignment: Object.fromEntries(Object.entries(config.workloads).map(([pod, share]) => [pod, share.jobs])) };
    } catch {
      return undefined;
    }
  };

  const results: StepResult[] = [];
  let statusVersion = 0;
  /**
   * `start`: the pool's creation, which any config ends (one written before the command included).
   * `crash`: `crashed` killed as it ran; over once it is Ready again, at whatever version (a system may not react).
   */
  const step = async (name: string, replicas: number, act: () => Promise<void>, kind: StepResult['kind'] = 'resize', crashed?: string): Promise<void> => {
    const r = recorder;
    const deletedBefore = new Set([...r.pods.values()].filter((p) => p.deletedAt !== undefined).map((p) => p.uid));
    const before = await workerConfig();
    const versionBefore = kind === 'resize' ? (before?.version ?? -1) : kind === 'crash' ? (before?.version ?? 0) - 1 : -1;
    const ready = async (pod: string) =>
      (await core.readNamespacedPod({ name: pod, namespace: ns })).status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
    const pods = podNames(replicas);
    const from = Date.now();
    progress(`${label}: ${name}`);
    await act();
    // The step is over when the workers' own reports show them running what
    // the ConfigMap assigns at a newer version, and (Swarm) its status says so.
    const firstSeen = new Map<number, number>();
    let statusAt: number | undefined;
    let last: { version: number; assignment: Assignment } | undefined;
    const done = await eventually(
      `the workers ran the new assignment at ${replicas} replicas`,
      async () => {
        const now = Date.now();
        if (crashed && !(await ready(crashed))) return undefined;
        if (system.statusConverged && statusAt === undefined) {
          const version = await system.statusConverged(kind === 'crash' ? statusVersion - 1 : statusVersion, replicas);
          if (version !== undefined) {
            statusAt = now;
            statusVersion = version;
          }
        }
        const config = await workerConfig();
        if (!config || config.version <= versionBefore) return undefined;
        if (!firstSeen.has(config.version)) firstSeen.set(config.version, now);
        last = config;
        if (!runsAssignment(r.running(now).byPod, config.assignment, pods)) return undefined;
        if (system.statusConverged && statusAt === undefined) return undefined;
        // The workers converged when the state they run now began; over once it held QUIET_MS.
        const since = r.lastChangeIn({ from, to: now });
        return now - since >= QUIET_MS ? since : undefined;
      },
      STEP_TIMEOUT_MS + QUIET_MS,
      250,
    ).catch(() => undefined);
    const workersAt = done;
    // The window ends where the final state began: a defect of that state at rest is reported apart (assigned to none / two+).
    const to = done ?? Date.now();
    await r.settle();
    const report = r.report(seedStreams, { from, to });
    const deleted = [...r.pods.values()].filter((p) => p.deletedAt !== undefined && !deletedBefore.has(p.uid));
    const ordinal = (pod: string) => Number(pod.slice(pod.lastIndexOf('-') + 1));
    const defects = last ? assignmentDefects(last.assignment, seedStreams) : undefined;
    // A config in force before the command was written at 0 s, as far as the step is concerned.
    const writtenAt = !last ? undefined : before?.version === last.version ? from : firstSeen.get(last.version);
    const result: StepResult = {
      step: name,
      kind,
      replicas,
      version: last?.version,
      configWrittenS: writtenAt === undefined ? undefined : (writtenAt - from) / 1000,
      statusConvergedS: statusAt === undefined ? undefined : (statusAt - from) / 1000,
      workersConvergedS: workersAt === undefined ? undefined : (workersAt - from) / 1000,
      uncoveredJobSeconds: report.totals.uncoveredSeconds,
      jobsUncovered: report.totals.jobsUncovered,
      longestGapS: Math.max(0, ...report.gaps.map((g) => (g.to - g.from) / 1000)),
      duplicateJobSeconds: report.totals.duplicateSeconds,
      jobsDuplicated: report.totals.jobsDuplicated,
      podsRestarted: deleted.filter((p) => ordinal(p.name) < replicas).length,
      podsRemoved: deleted.filter((p) => ordinal(p.name) >= replicas).length,
      assignedToNone: defects?.onNone.length ?? 0,
      assignedToSeveral: defects?.onSeveral.length ?? 0,
      anomalies: report.anomalies.length,
      misses: r.misses.length,
    };
    results.push(result);
    progress(
      `${label}: ${name}: uncovered ${result.uncoveredJobSeconds} job-s (${result.jobsUncovered} jobs), duplicate ${result.duplicateJobSeconds} job-s, ` +
        `config ${fmt(result.configWrittenS)} s, status ${fmt(result.statusConvergedS)} s, workers ${fmt(result.workersConvergedS)} s, restarted ${result.podsRestarted}, removed ${result.podsRemoved}`,
    );
  };

  await system.configure();
  await step(`start at ${START_REPLICAS}`, START_REPLICAS, () => system.start(), 'start');
  let replicas = START_REPLICAS;
  for (const next of SCALES) {
    await step(`${replicas}→${next}`, next, () => system.scale(next));
    replicas = next;
  }
  // The same action for every system: two crashes in a row (the kubelet restarts the first at once, backs off 10 s before the second's restart).
  const readPod = () => core.readNamespacedPod({ name: CRASH_VICTIM, namespace: ns });
  await step(CRASH_STEP, replicas, async () => void (await crashLoop(readPod, { crashes: 2 })), 'crash', CRASH_VICTIM);
  return results;
}

/**
 * Swarm as this tree has it, deployed on the cluster's real Knative (run():
 * ApiServerSource → Broker → Triggers → the functions' Knative Services, under
 * their own ServiceAccounts, `namespace` watched and pinged by its PingSource).
 * `scale sts`: the sample as it is (hot-reloading workers, restart policy None:
 * the handoff staged through the ConfigMap; MakeBeforeBreak), resized with
 * `kubectl scale sts` (the StatefulSet moves first). `scale swm`: the same with
 * Swarm owning the count (spec.replicas, `kubectl scale swm`). `(Restart)`:
 * restart policy Restart (Swarm restarts the pods whose share changed), `kubectl scale sts`.
 */
function swarmSystem(cluster: Cluster, image: string, namespace: string, name: SwarmSystemName): SystemUnderTest {
  const kubeconfig = cluster.kubeconfigPath;
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const readSwarm = async (): Promise<Swarm> =>
    (await custom.getNamespacedCustomObject({ group: 'k8slab.info', version: 'v1alpha1', plural: 'swarms', namespace, name: 'swarm-worker' })) as Swarm;
  const owned = name === 'swarm-owned';
  return {
    name,
    namespace,
    configure: async () => {
      await kubectl(kubeconfig, ['apply', '-f', '-'], sampleSwarmYaml(namespace, seedStreams, SWARM_SPEC[name]));
      // Handled: its status says it waits for the StatefulSet (assign is up, as the original's controller is).
      await eventually(
        'the Swarm waiting for its StatefulSet',
        async () => {
          const s = await readSwarm();
          const waiting = s.status?.observedGeneration === s.metadata.generation && s.status?.conditions?.some((c) => c.reason === 'StatefulSetNotFound');
          return waiting ? true : undefined;
        },
        120_000,
        250,
      );
    },
    start: async () => {
      await kubectl(kubeconfig, ['apply', '-f', '-'], workerPoolYaml(namespace, START_REPLICAS, image));
    },
    scale: async (replicas) => {
      await kubectl(kubeconfig, ['-n', namespace, 'scale', owned ? 'swm/swarm-worker' : 'sts/swarm-worker', '--replicas', String(replicas)]);
    },
    statusConverged: async (afterVersion, replicas) => {
      const s = await readSwarm();
      const st = s.status;
      const ok = st?.phase === 'Running' && (st.version ?? 0) > afterVersion && st.readyReplicas === replicas && st.observedGeneration === s.metadata.generation;
      return ok ? st.version : undefined;
    },
    // Swarm stays deployed for the next system; run() deletes the namespace.
    stop: async () => undefined,
  };
}

/**
 * The original operator: its CRD in place of Swarm's (same name), its
 * documented placeholder ConfigMap, the same worker pool with the StatefulSet
 * labelled as it selects them (test/harness/original-operator.ts), and its
 * controller out of cluster with admin credentials, as its external mode runs.
 */
async function originalSystem(cluster: Cluster, image: string, namespace: string, built: { binary: string; moduleDir: string }): Promise<SystemUnderTest> {
  const kubeconfig = cluster.kubeconfigPath;
  await kubectl(kubeconfig, ['delete', 'crd', ORIGINAL_CRD_NAME, '--ignore-not-found', '--wait=true', '--timeout=120s']);
  await kubectl(kubeconfig, ['apply', '-f', join(built.moduleDir, 'k8s', 'crd.yaml')]);
  await kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', `crd/${ORIGINAL_CRD_NAME}`]);
  await kubectl(kubeconfig, ['create', 'namespace', namespace]);
  const shipped = await readFile(join(built.moduleDir, 'k8s', 'configmap.yaml'), 'utf8');
  await kubectl(kubeconfig, ['apply', '-f', '-'], manifestIn(shipped, 'ConfigMap', CONFIG_MAP, namespace));
  const operator: RunningOriginalOperator = await startOriginalOperator({
    binary: built.binary,
    kubeconfig,
    namespace,
    jobs: seedStreams,
    workDir: join(cluster.workDir, 'original-operator'),
  });
  progress(`original operator running, log ${operator.logPath}`);
  return {
    name: 'original',
    namespace,
    // Configured in setup: its controller runs with the jobs before the pool exists.
    configure: async () => undefined,
    start: async () => {
      await kubectl(kubeconfig, ['apply', '-f', '-'], withStatefulSetAppLabel(workerPoolYaml(namespace, START_REPLICAS, image)));
    },
    scale: async (replicas) => {
      await kubectl(kubeconfig, ['-n', namespace, 'scale', 'sts/swarm-worker', '--replicas', String(replicas)]);
    },
    stop: () => operator.stop(),
  };
}

async function run(syncFrequency: string | undefined, built: { binary: string; moduleDir: string } | undefined): Promise<Run[]> {
  const sync = syncFrequency ?? 'default';
  progress(`sync ${sync}: starting the cluster (real node)`);
  const cluster: Cluster = await startCluster({
    workDir: join(defaultWorkDir, `bench-coverage-${process.pid}`),
    ephemeral: true,
    ownerPid: process.pid,
    onProgress: (line) => progress(`  ${line}`),
    ...(syncFrequency ? { syncFrequency } : {}),
  });
  const runs: Run[] = [];
  try {
    const kubeconfig = cluster.kubeconfigPath;
    const say = (line: string) => progress(`  ${line}`);
    progress(`sync ${sync}: installing Knative and deploying Swarm (first run: the Knative images take about 30 minutes, cached afterwards)`);
    const installed = await installKnative(cluster, { kubeconfig, progress: say });
    // Creates, labels and binds the Swarm systems' namespaces (`--watch-namespace`), each with its PingSource.
    const { workerImage: image } = await deploySwarmOnKnative(cluster, installed, { kubeconfig, progress: say, watchNamespaces: SWARM_NAMESPACES });
    const wanted = (system: SystemName) => !systemsArg || systemsArg.includes(system);
    const systems: Array<() => Promise<SystemUnderTest>> = (['swarm', 'swarm-owned', 'swarm-restart'] as const)
      .map((name, i) => [name, SWARM_NAMESPACES[i]!] as const)
      .filter(([name]) => wanted(name))
      .map(([name, namespace]) => async () => swarmSystem(cluster, image, namespace, name));
    if (built && wanted('original'))
      systems.push(async () => {
        // The original gets the node to itself, and its CRD has Swarm's name.
        progress(`sync ${sync}: removing Swarm and Knative for the original operator`);
        await uninstallSwarmAndKnative(kubeconfig, say);
        return originalSystem(cluster, image, 'bench-coverage-original', built);
      });
    for (const make of systems) {
      let system: SystemUnderTest | undefined;
      let recorder: WorkerPodsRecorder | undefined;
      try {
        system = await make();
        const label = `sync ${sync}, ${SYSTEM_LABEL[system.name]}`;
        recorder = await recordWorkerPool(kubeconfig, system.namespace);
        runs.push({ system: system.name, sync, image, results: await runScript(kubeconfig, system, recorder, label) });
      } finally {
        recorder?.stop();
        await system?.stop();
      }
      // The next system gets the node to itself.
      if (system) await kubectl(kubeconfig, ['delete', 'namespace', system.namespace, '--wait=true', '--timeout=120s']).catch(() => undefined);
    }
    return runs;
  } finally {
    progress(`sync ${sync}: stopping the cluster`);
    await cluster.stop();
  }
}

const syncTitle = (sync: string) => `kubelet sync period: ${sync === 'default' ? 'default (1m)' : sync}`;
const anomalyNote = (results: readonly StepResult[]) =>
  results.some((r) => r.anomalies || r.misses) ? ` Recorder anomalies/misses: ${results.map((r) => `${r.anomalies}/${r.misses}`).join(', ')}.` : '';

function peerSection(runs: readonly Run[]): string[] {
  const out: string[] = [];
  for (const sync of [...new Set(runs.map((r) => r.sync))]) {
    const these = runs.filter((r) => r.sync === sync);
    out.push(`### ${syncTitle(sync)}`, '', `Worker image: \`${these[0]?.image ?? '?'}\`.`, '');
    if (these.length > 1) out.push(...sideBySideTable(these.map((r) => SYSTEM_LABEL[r.system]), these.map((r) => r.results)), '');
    for (const run of these) {
      out.push(`${SYSTEM_LABEL[run.system]}:`, '', ...stepsTable(run.results, { status: run.system !== 'original' }), '');
      const note = anomalyNote(run.results);
      if (note) out.push(note.trim(), '');
    }
  }
  return out;
}

const machine = realNodeMachine();
const measures =
  "Per step, over the window from the command until the workers' own reports show them running what the ConfigMap assigns at a newer version (the first step: at any version), each of the new replica count's pods its share, in a state that then holds for 25 s (a system may still act after the workers first agree: the original deletes its old workers 4 s × (1 + ordinal) after its 5 s conciliation tick, when hot-reloading workers may already run the new share); the window ends where that final state began (capped at 240 s): *uncovered job-s* = Σ over jobs of the seconds no worker reported running it; *duplicate job-s* = Σ of the seconds two or more did; from the workers' job.started/job.stopped log lines (examples/worker/README.md), read by test/support/coverage-recorder. *config written*: the ConfigMap held the version the step ended at (0.0: before the command, as a Swarm that owns its count has it before its StatefulSet exists); *status converged* (Swarm): the Swarm said Running at the new version with every pod Ready (the step waits for it too); *workers converged*: what the workers themselves ran agreed with the ConfigMap; *assigned to none / to two+ at rest*: jobs the final ConfigMap gives no worker or several (for an exact assignment, 0 / 0, and converged means every job run exactly once). A pod that died without stop lines ends at its container's terminated time. One run per setting: the numbers move by seconds from run to run with the machine's load and the kubelet's timing.";

const started = Date.now();
const tree = measuredTree();
const built = peer === 'original' ? await originalOperator((line) => progress(`  ${line}`)) : undefined;
const runs: Run[] = [];
for (const sync of syncs) runs.push(...(await run(sync, built)));
const took = `Generated ${new Date().toISOString()}, ${Math.round((Date.now() - started) / 1000)} s.`;
const body = (
  built
    ? [
        '## Coverage benchmark: Swarm (both scaling paths) against the original operator',
        '',
        `Command: \`SWARM_ORIGINAL_GIT_DIR=<git dir of github.com/marcosQuesada/k8s-swarm> npm run bench:coverage -- --peer original\` (bench/coverage.ts via tsx). ${took}`,
        machine,
        '',
        `Scenario: on one cluster per sync period, one system after the other, each in a fresh namespace with the same worker pool (knative/samples/statefulset.yaml, the reference worker image built from the Dockerfile, real pods mounting the real ConfigMap \`${CONFIG_MAP}\`) and the 27 seed streams: the pool created once the system holds its jobs (*start at 2*: the Swarm applied beforehand and handled by assign, which is then up, as the original's controller runs with its config before the pool exists), then resized 2→3→4→1→3, each step started when the previous one converged; then *${CRASH_STEP}*: its container killed from the node (SIGKILL to its processes, as an OOM kill does) as it runs, and again once the kubelet restarted it (at once, for a first crash), so that the kubelet backs off the next restart (CrashLoopBackOff, 10 s), the step over once the pod is Ready again and the workers run what the ConfigMap assigns (at any version: a system may not react to a crash). *${SYSTEM_LABEL.swarm}*: this tree, at ${tree}, the sample as it ships (hot-reloading workers, restart policy None: the handoff staged through the ConfigMap, each stage waiting for the workers' acknowledgements, each pod's kubelet asked to deliver every new share at once; MakeBeforeBreak, maxUnavailable 1) resized with \`kubectl scale sts/swarm-worker\` (the StatefulSet adds or removes pods first, and a pod it removes keeps running its jobs until the config gives it none, the sample's \`DRAIN_STATEFULSET\`, with every system here; Swarm deployed with \`npm run deploy\` on real Knative Serving + Eventing: ApiServerSource → Broker → Triggers → the functions' Knative Services, under their own ServiceAccounts). *${SYSTEM_LABEL['swarm-owned']}*: the same with Swarm owning the count (\`spec.replicas\`, resized with \`kubectl scale swm/swarm-worker\`). *${SYSTEM_LABEL['swarm-restart']}*: the same tree with restart policy Restart with BreakBeforeMake (Swarm restarts each pod whose share changed, losers before gainers, each waiting for the workers' acknowledgements; the reference worker also reloads by itself), resized with \`kubectl scale sts/swarm-worker\`. *original*: github.com/marcosQuesada/k8s-swarm's services/controller at ${readPins().originalOperator} (${readPins().originalOperatorSum}) (test/controlplane/versions.json), built from its module, run out of cluster (\`external\`, admin kubeconfig) with its own CRD (k8s/crd.yaml, installed in place of Swarm's, which has the same name), its documented placeholder ConfigMap (k8s/configmap.yaml) and the jobs in its config.yml in the seed's order. Its ConfigMap format is the one the reference worker reads (\`workloads: {<pod>: {jobs, version}}\` and a top-level \`version\`; every per-worker version is 0); the setup adds only the \`app: swarm-worker\` label on the StatefulSet, which the original selects by (test/harness/original-operator.ts).`,
        '',
        measures,
        '',
        ...peerSection(runs),
      ]
    : [
        '## Coverage benchmark: this design, both scaling paths',
        '',
        `Command: \`npm run bench:coverage\` (bench/coverage.ts via tsx), this tree at ${tree}. ${took}`,
        machine,
        '',
        `Scenario: the sample worker pool (knative/samples/statefulset.yaml, the reference worker image built from the Dockerfile, real pods mounting the real ConfigMap), created under a Swarm over the 27 seed streams (applied beforehand and handled by assign), Swarm deployed with \`npm run deploy\` on real Knative Serving + Eventing (ApiServerSource → Broker → Triggers → the functions' Knative Services, under their own ServiceAccounts), then resized 2→3→4→1→3, each step started when the previous one converged; then *${CRASH_STEP}*: its container killed from the node (SIGKILL to its processes, as an OOM kill does) as it runs, and again once the kubelet restarted it (at once, for a first crash), so that the kubelet backs off the next restart (CrashLoopBackOff, 10 s), the step over once the pod is Ready again and the workers run what the ConfigMap assigns (at any version: a system may not react to a crash). *${SYSTEM_LABEL.swarm}*: the sample as it ships (hot-reloading workers, restart policy None, MakeBeforeBreak, maxUnavailable 1), \`kubectl scale sts\`. *${SYSTEM_LABEL['swarm-owned']}*: the same with \`spec.replicas\` and \`kubectl scale swm\`. *${SYSTEM_LABEL['swarm-restart']}*: restart policy Restart (BreakBeforeMake), \`kubectl scale sts\`.`,
        '',
        measures,
        '',
        ...peerSection(runs),
      ]
).join('\n');

// A subset of the systems or of the sync periods is a look, not the committed record (unless --write).
if ((syncArg !== undefined || systemsArg !== undefined) && !process.argv.includes('--write')) process.stdout.write(body + '\n');
else {
  const file = new URL('RESULTS.md', import.meta.url);
  writeFileSync(file, withSection(existsSync(file) ? readFileSync(file, 'utf8') : '', built ? ORIGINAL_COVERAGE_SECTION : CURRENT_COVERAGE_SECTION, body));
  progress(`wrote bench/RESULTS.md (${built ? ORIGINAL_COVERAGE_SECTION : CURRENT_COVERAGE_SECTION})`);
}
