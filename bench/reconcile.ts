// npm run bench:reconcile — what a reconcile costs, this tree next to another
// (SWARM_BENCH_BASELINE, a checkout of an older main), measured in the same run
// on one local KWOK-only cluster (no real node, no lock). Each tree runs one
// host per function (functions/server.ts, with the admin kubeconfig) and owns a namespace holding the same
// objects; the bench posts the events the ApiServerSource would and reads the
// hosts' own /metrics (swarm_kube_requests_total) and /proc (CPU, peak RSS).
// Bounded: a few minutes; progress on stderr. Results: bench/RESULTS.md.
// SWARM_BENCH_CRD: a Swarm CRD file to install instead of this tree's, one that admits both
// trees' status (the older tree's, when this one only removed a status field: under this tree's
// CRD the older tree's status writes lose that field, so it never finds status as written).
// SWARM_BENCH_SHORTCUTS=1: this tree against itself with each shortcut switched off
// (lib/reconcilers/shortcuts.ts; hosts from bench/shortcuts-host.ts), in the same run: what
// each saves. SWARM_BENCH_BASELINE is then optional. Results: their own section of RESULTS.md.
// SWARM_BENCH_SECONDS_PER_TREE (180): past this many seconds per column the 100- and 500-Swarm
// steps are skipped (a shared machine may need 600).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { freePort } from '../test/controlplane/ports.js';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join, resolve } from 'node:path';
import { LIMITS } from '../lib/api/schema.js';
import { assignmentChangedEvent } from '../lib/events/assignment-changed.js';
import { apiServerEvent, toHttpMessage } from '../lib/events/apiserver-event.js';
import { resyncPingEvent } from '../lib/events/ping.js';
import type { KubeObject } from '../lib/events/types.js';
import { repoRoot, startCluster } from '../test/controlplane/cluster.js';
import { acknowledgeKwokPools, type Acknowledger } from '../test/harness/kwok-acknowledger.js';
import { enableNamespace, installSwarm, kubectl } from '../test/harness/swarm-install.js';
import { Timeline, eventually } from '../test/support/timeline.js';
import { withSection } from './results-file.js';

const baselineTree = process.env.SWARM_BENCH_BASELINE;
const shortcutsRun = process.env.SWARM_BENCH_SHORTCUTS === '1';
/** The shortcuts run's hosts: label, namespace, the shortcuts switched off. */
const VARIANTS = [
  ['all shortcuts on', 'bench-on', []],
  ['no echo skip', 'bench-no-echo', ['echoSkip']],
  ['no config cache', 'bench-no-cache', ['configCache']],
  ['no coalescer', 'bench-no-coalesce', ['coalescer']],
] as const;
if (!baselineTree && !shortcutsRun) {
  process.stderr.write('set SWARM_BENCH_BASELINE to a checkout of the main to compare with (npm ci done there), e.g.\n  git worktree add --detach /tmp/h8-old b7a1d94 && (cd /tmp/h8-old && npm ci)\n');
  process.exit(2);
}
const MAX_SWARMS = Number(process.env.SWARM_BENCH_MAX_SWARMS ?? 500);
/** The most jobs a Swarm may have (the schema's maxJobs): the target's size. */
const JOBS = LIMITS.maxJobs;
const NOOPS = 20;
/** The run's time budget per tree (column) before the 100- and 500-Swarm steps; a loaded machine needs more. */
const SECONDS_PER_TREE = Number(process.env.SWARM_BENCH_SECONDS_PER_TREE ?? 180);
const progress = (line: string) => process.stderr.write(`[bench:reconcile] ${line}\n`);
const jobs = (n: number, prefix = 'job') => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);

interface Host {
  port: number;
  child: ChildProcess;
}
interface Tree {
  label: string;
  dir: string;
  ns: string;
  assign: Host;
  restart: Host;
  /** Shortcuts switched off (a shortcuts run's host), none when undefined (functions/server.ts itself). */
  off?: readonly string[];
}

/**
 * `tsx`: the TypeScript under tsx as a loader (not its CLI's child), so /proc/<pid> is the host;
 * `compiled`: tsc's output (node dist/functions/server.js, NODE_ENV=production), after buildTree; the image runs the same code bundled into one file (npm run bundle).
 */
async function startHost(dir: string, fn: 'assign' | 'restart', kubeconfig: string, form: 'tsx' | 'compiled' = 'tsx', off?: readonly string[]): Promise<Host> {
  const port = await freePort();
  const entry = off ? 'bench/shortcuts-host.ts' : 'functions/server.ts';
  const child = spawn(process.execPath, form === 'tsx' ? ['--import', 'tsx', entry] : ['dist/functions/server.js'], {
    cwd: dir,
    env: {
      ...process.env,
      ...(off ? { SWARM_BENCH_SHORTCUTS_OFF: off.join(',') } : {}),
      ...(form === 'compiled' ? { NODE_ENV: 'production' } : {}),
      FUNCTION: fn,
      KUBECONFIG: kubeconfig,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      OTEL_TRACES_EXPORTER: 'none',
    },
    stdio: 'ignore',
  });
  for (let i = 0; i < 300; i++) {
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false)) return { port, child };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${dir}: ${fn} host did not start`);
}

/** The tree's production build (npm run build: tsc -p tsconfig.build.json → dist/, ignored by git), as the Dockerfile makes it. */
function buildTree(dir: string): Promise<void> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, [join(dir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { cwd: dir, stdio: 'ignore' });
    child.once('exit', (code) => (code === 0 ? ok() : fail(new Error(`${dir}: tsc -p tsconfig.build.json exited ${code}`))));
  });
}

const cpuMs = (pid: number) => {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100; // utime + stime, in clock ticks of 10 ms
};
const statusKiB = (pid: number, field: 'VmHWM' | 'VmRSS') => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
const peakRssMiB = (pid: number) => statusKiB(pid, 'VmHWM') / 1024;
const rssMiB = (pid: number) => statusKiB(pid, 'VmRSS') / 1024;

/** swarm_kube_requests_total by kind: all, writes (anything but GET/LIST), 409s. */
async function requests(host: Host): Promise<{ all: number; writes: number; conflicts: number }> {
  const text = await (await fetch(`http://127.0.0.1:${host.port}/metrics`)).text();
  const out = { all: 0, writes: 0, conflicts: 0 };
  for (const line of text.split('\n')) {
    if (!line.startsWith('swarm_kube_requests_total{')) continue;
    const n = Number(line.split(' ').pop());
    out.all += n;
    if (!/verb="(GET|LIST)"/.test(line)) out.writes += n;
    if (/code="409"/.test(line)) out.conflicts += n;
  }
  return out;
}

async function post(host: Host, event: ReturnType<typeof apiServerEvent>): Promise<{ status: number; body: string }> {
  const { headers, body } = toHttpMessage(event);
  const res = await fetch(`http://127.0.0.1:${host.port}/`, { method: 'POST', headers, body });
  return { status: res.status, body: await res.text() };
}

async function getJson(kubeconfig: string, ns: string, what: string): Promise<KubeObject> {
  return JSON.parse(await kubectl(kubeconfig, ['get', '-n', ns, what, '-o', 'json'])) as KubeObject;
}

const statefulSetYaml = (ns: string, name: string, replicas: number) => `apiVersion: apps/v1
kind: StatefulSet
metadata: {name: ${name}, namespace: ${ns}}
spec:
  serviceName: ${name}
  replicas: ${replicas}
  podManagementPolicy: Parallel
  selector: {matchLabels: {app: ${name}}}
  template:
    # Hot reload (the Swarms' default policy) needs pods that declare acknowledgement; the target's
    # are played by the bench (acknowledgeKwokPools), the others never converge and need not.
    metadata: {labels: {app: ${name}, k8slab.info/acknowledges: lease}}
    spec:
      nodeSelector: {type: kwok}
      tolerations: [{key: kwok.x-k8s.io/node, operator: Exists, effect: NoSchedule}]
      terminationGracePeriodSeconds: 0
      containers: [{name: worker, image: worker}]
`;
const swarmYaml = (ns: string, name: string, jobList: string[]) =>
  JSON.stringify({
    apiVersion: 'k8slab.info/v1alpha1',
    kind: 'Swarm',
    metadata: { name, namespace: ns },
    spec: { statefulSetName: `${name}-worker`, configMapName: `${name}-config`, workload: { jobs: jobList } },
  });
const apply = (kubeconfig: string, docs: string[]) => kubectl(kubeconfig, ['apply', '--server-side', '-f', '-'], docs.join('\n---\n'));

async function events(kubeconfig: string, tree: Tree, name: string) {
  const swarm = await getJson(kubeconfig, tree.ns, `swarm/${name}`);
  const sts = await getJson(kubeconfig, tree.ns, `statefulset/${name}-worker`);
  const pod = await getJson(kubeconfig, tree.ns, `pod/${name}-worker-0`);
  return {
    // The Swarm as it stands: its status has observed its generation, the echo of assign's own status write.
    swarmEcho: apiServerEvent({ verb: 'update', mode: 'resource', object: swarm }),
    // The same without its status: an update assign has not reconciled as far as the copy says.
    swarm: apiServerEvent({ verb: 'update', mode: 'resource', object: { ...swarm, status: undefined } }),
    statefulSet: apiServerEvent({ verb: 'update', mode: 'resource', object: sts }),
    // The same at an older version (a copy no look read): a per-instance record of versions read (5d27b78's settled looks) does not answer it.
    statefulSetUnread: apiServerEvent({ verb: 'update', mode: 'resource', object: { ...sts, metadata: { ...sts.metadata, resourceVersion: '1' } } }),
    pod: apiServerEvent({ verb: 'update', mode: 'resource', object: pod }),
    podUnread: apiServerEvent({ verb: 'update', mode: 'resource', object: { ...pod, metadata: { ...pod.metadata, resourceVersion: '1' } } }),
    swarmUnread: apiServerEvent({ verb: 'update', mode: 'resource', object: { ...swarm, status: undefined, metadata: { ...swarm.metadata, resourceVersion: '1' } } }),
    changed: assignmentChangedEvent({ swarm: { namespace: tree.ns, name, uid: swarm.metadata.uid ?? '' }, version: 1, workers: [] }) as ReturnType<typeof apiServerEvent>,
  };
}

/**
 * Drive a Swarm to rest: its namespace's resync ping (a whole look, whatever changed: the bench
 * posts no Pod events) and restart's event, until neither function writes and it is Running
 * (no restart left recorded).
 */
async function settle(kubeconfig: string, tree: Tree, name: string): Promise<void> {
  let last = '';
  for (let round = 0; round < 60; round++) {
    const e = await events(kubeconfig, tree, name);
    const before = [await requests(tree.assign), await requests(tree.restart)];
    const answers = [await post(tree.assign, resyncPingEvent({ namespace: tree.ns }) as never), await post(tree.restart, e.changed)];
    const after = [await requests(tree.assign), await requests(tree.restart)];
    const status = (await getJson(kubeconfig, tree.ns, `swarm/${name}`)).status as { phase?: string; conditions?: Array<{ type: string; reason: string; message: string }> } | undefined;
    const running = status?.phase === 'Running';
    if (after[0]!.writes === before[0]!.writes && after[1]!.writes === before[1]!.writes && round > 1 && running) return;
    const ready = status?.conditions?.find((c) => c.type === 'Ready');
    last = `phase ${status?.phase}, Ready ${ready?.reason}: ${ready?.message?.slice(0, 200)}; writes assign ${after[0]!.writes - before[0]!.writes}, restart ${after[1]!.writes - before[1]!.writes}; answers ${answers.map((a) => a.status).join(', ')}`;
    await new Promise((r) => setTimeout(r, 500));
  }
  throw new Error(`${tree.label}: ${name} did not settle (last round: ${last})`);
}

interface NoOp {
  requests: number;
  writes: number;
  cpuMs: number;
}
async function noOp(host: Host, event: ReturnType<typeof apiServerEvent>, n = NOOPS): Promise<NoOp> {
  await post(host, event); // warm
  const r0 = await requests(host);
  const c0 = cpuMs(host.child.pid!);
  for (let i = 0; i < n; i++) await post(host, event);
  const c1 = cpuMs(host.child.pid!);
  const r1 = await requests(host);
  return { requests: (r1.all - r0.all) / n, writes: (r1.writes - r0.writes) / n, cpuMs: (c1 - c0) / n };
}

/** Events/s answered, and API requests per event, `concurrency` at a time for `seconds`. */
async function sustained(host: Host, event: ReturnType<typeof apiServerEvent>, seconds: number, concurrency: number): Promise<{ rate: number; requests: number }> {
  const until = Date.now() + seconds * 1000;
  const before = await requests(host);
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (Date.now() < until) {
        await post(host, event);
        done++;
      }
    }),
  );
  const after = await requests(host);
  return { rate: done / seconds, requests: (after.all - before.all) / Math.max(1, done) };
}

const quantile = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))]!;

async function main(): Promise<void> {
  const t0 = Date.now();
  const workDir = mkdtempSync(join(tmpdir(), 'bench-reconcile-'));
  progress('starting a KWOK-only cluster');
  const cluster = await startCluster({ workDir, ephemeral: true, realNode: false, nodes: 2, ownerPid: process.pid, onProgress: progress });
  const kc = cluster.kubeconfigPath;
  const children: ChildProcess[] = [];
  const acknowledgers: Acknowledger[] = [];
  try {
    await installSwarm(kc);
    const crd = process.env.SWARM_BENCH_CRD;
    if (crd) {
      progress(`installing the Swarm CRD of ${crd}`);
      await kubectl(kc, ['apply', '--server-side', '--force-conflicts', '-f', resolve(crd)]);
      await kubectl(kc, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/swarms.k8slab.info']);
    }
    const trees: Tree[] = [];
    const lineup: Array<readonly [string, string, string, readonly string[] | undefined]> = [
      ...(baselineTree ? [['main before', resolve(baselineTree), 'bench-old', undefined] as const] : []),
      ...(shortcutsRun ? VARIANTS.map(([label, ns, off]) => [label, repoRoot, ns, off] as const) : [['this tree', repoRoot, 'bench-new', undefined] as const]),
    ];
    for (const [label, dir, ns, off] of lineup) {
      await enableNamespace(kc, ns);
      const assign = await startHost(dir, 'assign', kc, 'tsx', off);
      const restart = await startHost(dir, 'restart', kc, 'tsx', off);
      children.push(assign.child, restart.child);
      trees.push({ label, dir, ns, assign, restart, ...(off ? { off } : {}) });
      // KWOK's pods run nothing: the target's workers acknowledge their shares as hot-reloading ones would.
      acknowledgers.push(acknowledgeKwokPools(kc, ns, () => ['target-worker'], { configMapOf: () => 'target-config' }));
    }
    const results: Record<string, Record<string, string>> = Object.fromEntries(trees.map((t) => [t.label, {}]));
    const put = (tree: Tree, k: string, v: string) => (results[tree.label]![k] = v);

    progress(`one Swarm of ${JOBS.toLocaleString('en-US')} jobs over 10 workers per tree`);
    for (const tree of trees) {
      await apply(kc, [statefulSetYaml(tree.ns, 'target-worker', 10), swarmYaml(tree.ns, 'target', jobs(JOBS))]);
      await kubectl(kc, ['rollout', 'status', '-n', tree.ns, 'statefulset/target-worker', '--timeout=120s']);
      await settle(kc, tree, 'target');
    }

    const noOpAt = async (swarms: number) => {
      for (const tree of trees) {
        const e = await events(kc, tree, 'target');
        const a0 = await noOp(tree.assign, e.swarmEcho);
        const a1 = await noOp(tree.assign, e.swarm);
        const a2 = await noOp(tree.assign, e.statefulSet);
        // A worker's Pod events reach assign too (a crash-looping worker changes no StatefulSet).
        const a3 = await noOp(tree.assign, e.pod);
        // An older version: one no look of the host read (5d27b78 glanced at its object; without the shortcuts, the whole look as for any event).
        const a4 = await noOp(tree.assign, e.statefulSetUnread);
        const a5 = await noOp(tree.assign, e.podUnread);
        const a6 = await noOp(tree.assign, e.swarmUnread);
        // restart's one event (Pod events go to assign alone since restart stopped subscribing to them).
        const r = await noOp(tree.restart, e.changed);
        put(tree, `assign requests/no-op, the object as it stands (Swarm, StatefulSet, Pod event) @${swarms}`, `${a1.requests}, ${a2.requests}, ${a3.requests}`);
        put(tree, `assign requests/no-op, an older version of the object (StatefulSet, Pod, Swarm event) @${swarms}`, `${a4.requests}, ${a5.requests}, ${a6.requests}`);
        put(tree, `assign requests/event, a Swarm update echoing its status write @${swarms}`, `${a0.requests}`);
        put(tree, `restart requests/no-op (assignment.changed) @${swarms}`, `${r.requests}`);
        put(tree, `writes/no-op (assign, restart) @${swarms}`, `${Math.max(a0.writes, a1.writes, a2.writes, a3.writes, a4.writes, a5.writes, a6.writes)}, ${r.writes}`);
        put(tree, `no-op CPU ms, assign (StatefulSet event, an older version) @${swarms}`, a4.cpuMs.toFixed(1));
        put(tree, `no-op CPU ms, assign (StatefulSet event, the object as it stands) @${swarms}`, a2.cpuMs.toFixed(1));
        put(tree, `no-op CPU ms, restart (assignment.changed) @${swarms}`, r.cpuMs.toFixed(1));
        put(tree, `CPU ms, assign (a Swarm update echoing its status write) @${swarms}`, a0.cpuMs.toFixed(1));
        // The hosts live through the whole run: what they hold after these events, and the most they held so far.
        put(tree, `RSS / peak RSS MiB, assign host after the no-ops @${swarms}`, `${rssMiB(tree.assign.child.pid!).toFixed(0)} / ${peakRssMiB(tree.assign.child.pid!).toFixed(0)}`);
        progress(`${tree.label} @${swarms} Swarms: assign ${a2.requests}/${a4.requests} req ${a4.cpuMs.toFixed(1)} ms, restart ${r.requests} req ${r.cpuMs.toFixed(1)} ms`);
      }
    };
    await noOpAt(1);

    progress('events/s sustained (no-op, 10 concurrent, 5 s each)');
    for (const tree of trees) {
      const e = await events(kc, tree, 'target');
      const a = await sustained(tree.assign, e.statefulSetUnread, 5, 10);
      const r = await sustained(tree.restart, e.changed, 5, 10);
      put(tree, 'events/s sustained, assign (StatefulSet event, an older version)', a.rate.toFixed(0));
      put(tree, 'events/s sustained, restart (assignment.changed)', r.rate.toFixed(0));
      // All for one Swarm, 10 at a time: what the coalescer shares.
      put(tree, 'requests/event sustained, 10 concurrent (assign, restart)', `${a.requests.toFixed(2)}, ${r.requests.toFixed(2)}`);
    }

    progress('event → ConfigMap written: 20 changes of the job list');
    for (const tree of trees) {
      const written: number[] = [];
      const answered: number[] = [];
      // The write itself, as a watch sees it, not the answer: that comes after the status
      // write too, and after the look that confirms it.
      const timeline = await Timeline.start(kc, tree.ns);
      try {
        for (let i = 0; i < 20; i++) {
          await apply(kc, [swarmYaml(tree.ns, 'target', jobs(JOBS - 1 - (i % 2)))]);
          const e = (await events(kc, tree, 'target')).swarm;
          const start = Date.now();
          const answer = await post(tree.assign, e);
          answered.push(Date.now() - start);
          const write = await eventually('the ConfigMap written', async () => timeline.configMapWrites.find((w) => w.name === 'target-config' && w.at >= start), 30_000, 5);
          written.push(write.at - start);
          if (answer.status >= 300) progress(`${tree.label}: change ${i} answered ${answer.status} ${answer.body.slice(0, 200)}`);
        }
      } finally {
        timeline.stop();
      }
      const p = (xs: number[]) => `${quantile(xs, 0.5).toFixed(0)} / ${quantile(xs, 0.99).toFixed(0)}`;
      put(tree, `event → ConfigMap written p50 / p99 ms (20 changes, ${JOBS.toLocaleString('en-US')} jobs)`, p(written));
      put(tree, `event → answered p50 / p99 ms (the same changes)`, p(answered));
      await settle(kc, tree, 'target');
    }

    const conflicts = await Promise.all(trees.map(async (t) => (await requests(t.assign)).conflicts + (await requests(t.restart)).conflicts));
    trees.forEach((t, i) => put(t, '409s over the whole run', String(conflicts[i])));

    for (const total of [100, MAX_SWARMS].filter((n, i, a) => n > 1 && a.indexOf(n) === i)) {
      if ((Date.now() - t0) / 1000 > SECONDS_PER_TREE * trees.length) {
        progress(`time is up: flatness measured up to the previous step, not ${total}`);
        break;
      }
      progress(`${total} Swarms per namespace`);
      for (const tree of trees) {
        const docs: string[] = [];
        for (let i = 1; i < total; i++) docs.push(swarmYaml(tree.ns, `other-${i}`, jobs(10)));
        for (let i = 0; i < docs.length; i += 100) await apply(kc, docs.slice(i, i + 100));
      }
      await noOpAt(total);
    }

    progress('peak RSS: fresh assign hosts, 25 Swarms × 4,000 jobs, 10 events at a time (containerConcurrency); under tsx, then compiled');
    // A shortcuts run measures under tsx only (its hosts are bench/shortcuts-host.ts, which tsc's build leaves out).
    if (!shortcutsRun) for (const tree of trees) await buildTree(tree.dir);
    for (const [form, suffix, row] of [
      ['tsx', 'rss', 'peak RSS MiB, assign under tsx, 25 Swarms × 4,000 jobs, 10 concurrent'],
      ...(shortcutsRun ? [] : [['compiled', 'rss-c', 'peak RSS MiB, assign compiled (as in the image), 25 Swarms × 4,000 jobs, 10 concurrent'] as const]),
    ] as const) {
      for (const tree of trees) {
        const ns = `${tree.ns}-${suffix}`;
        await enableNamespace(kc, ns);
        const docs: string[] = [];
        for (let i = 0; i < 25; i++) docs.push(statefulSetYaml(ns, `s${i}-worker`, 4), swarmYaml(ns, `s${i}`, jobs(4_000, `s${i}-job`)));
        await apply(kc, docs);
        const swarmEvents = await Promise.all(Array.from({ length: 25 }, async (_, i) => apiServerEvent({ verb: 'update', mode: 'resource', object: await getJson(kc, ns, `swarm/s${i}`) })));
        const rounds = async (host: Host, n: number) => {
          for (let round = 0; round < n; round++) {
            const queue = [...swarmEvents];
            await Promise.all(Array.from({ length: 10 }, async () => {
              for (let e = queue.shift(); e; e = queue.shift()) await post(host, e);
            }));
          }
        };
        // One host writes the 25 configs; a fresh one (an instance started from zero) is
        // measured over them: it reads and parses every config it did not write itself.
        const writer = await startHost(tree.dir, 'assign', kc, form, tree.off);
        children.push(writer.child);
        await rounds(writer, 1);
        writer.child.kill('SIGTERM');
        const host = await startHost(tree.dir, 'assign', kc, form, tree.off);
        children.push(host.child);
        await rounds(host, 3);
        // Then the namespace's resync ping: a whole look at each Swarm (4 at a time).
        const resync = await post(host, resyncPingEvent({ namespace: ns }) as never);
        if (resync.status >= 300) throw new Error(`${tree.label}: resync answered ${resync.status}`);
        put(tree, row, peakRssMiB(host.child.pid!).toFixed(0));
        host.child.kill('SIGTERM');
      }
    }

    const rows = Object.keys(results[trees[1]!.label]!);
    const seconds = ((Date.now() - t0) / 1000).toFixed(0);
    const table = [
      `| | ${trees.map((t) => t.label).join(' | ')} |`,
      `| --- | ${trees.map(() => '---').join(' | ')} |`,
      ...rows.map((r) => `| ${r} | ${trees.map((t) => results[t.label]![r] ?? '—').join(' | ')} |`),
    ];
    const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, shared with other work; ${seconds} s; one local KWOK-only cluster`;
    const body = shortcutsRun
      ? [
          '## What each shortcut saves (bench:reconcile, SWARM_BENCH_SHORTCUTS=1)',
          '',
          `\`SWARM_BENCH_SHORTCUTS=1 npm run bench:reconcile\`; ${machine}; this tree's hosts side by side (bench/shortcuts-host.ts, under tsx, one host per function and column, admin credentials), each column in its own namespace holding the same objects, with the shortcut its column names switched off (lib/reconcilers/shortcuts.ts)${baselineTree ? `; "main before" = ${process.env.SWARM_BENCH_BASELINE_LABEL ?? baselineTree}` : ''}.`,
          '',
          `The rows as in "Reconcile cost" above: requests per event from each host's swarm_kube_requests_total; CPU = the host process's user+system time per event (10 ms clock ticks over ${NOOPS} events); @N = N Swarms in the namespace (the target has ${JOBS.toLocaleString('en-US')} jobs over 10 workers, the others 10 jobs); requests/event sustained = requests over events answered while 10 events for the target are in flight at once for 5 s; peak RSS = VmHWM of a fresh assign host over 25 Swarms × 4,000 jobs whose configs another host wrote. The target's KWOK workers run nothing: the bench writes their acknowledgement Leases (acknowledgeKwokPools, as hot-reloading workers would); what judging them costs at scale is \`npm run bench:decide\`'s.`,
          '',
          ...table,
          '',
          'Reading it: CPU is counted in 10 ms clock ticks on a small machine other work shares, so one figure moves by several ms between runs; compare a column with the first, not single ms.',
        ].join('\n')
      : [
          '## Reconcile cost (bench:reconcile)',
          '',
          `\`${process.env.SWARM_BENCH_CRD ? 'SWARM_BENCH_CRD=<the CRD file> ' : ''}SWARM_BENCH_BASELINE=<checkout of the main before> npm run bench:reconcile\`; ${cpus().length} × ${cpus()[0]?.model ?? 'CPU'}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, shared with other work; ${seconds} s; one local KWOK-only cluster${process.env.SWARM_BENCH_CRD ? ` (the Swarm CRD of ${process.env.SWARM_BENCH_CRD})` : ''}; both trees' hosts side by side (one host per function each, admin credentials), each tree in its own namespace holding the same objects; "main before" = ${process.env.SWARM_BENCH_BASELINE_LABEL ?? baselineTree}.`,
          '',
          `Requests and writes per no-op event from each host's swarm_kube_requests_total; CPU = the host process's user+system time per event (HTTP, CloudEvent parsing, the reconcile; 10 ms clock ticks over ${NOOPS} events); @N = N Swarms in the namespace (the target has ${JOBS.toLocaleString('en-US')} jobs, the others 10); latency = from posting a Swarm event after a change of the job list to the assign host: to the ConfigMap's write, as a watch opened before sees it, and to the host's answer (after its writes and the look that confirms its status write); RSS / peak RSS @N = VmRSS / VmHWM of the long-lived assign host after the no-op events of that step; peak RSS = VmHWM of a fresh assign host over 25 Swarms whose configs another host wrote (as an instance started from zero finds them), 3 rounds of their Swarm events (10 at a time: the container concurrency), then their namespace's resync ping (a whole look at each, 4 at a time), under tsx and compiled (each tree built with its tsconfig.build.json, run as \`node dist/functions/server.js\` with NODE_ENV=production: the code the image runs, unbundled), each tree in its own namespace.`,
          '',
          ...table,
          '',
          'Reading it: CPU is counted in 10 ms clock ticks on a small machine other work shares, so one figure moves by several ms between runs (and between the @N steps of one run); compare orders of magnitude across trees and a trend across @N, not single ms. p99 of 20 samples is their maximum. Under tsx the loader adds to RSS; the compiled figure is the one to hold against the memory limit (knative/base/services.yaml).',
        ].join('\n');
    const resultsPath = join(repoRoot, 'bench', 'RESULTS.md');
    writeFileSync(resultsPath, withSection(readFileSync(resultsPath, 'utf8'), shortcutsRun ? 'bench:reconcile:shortcuts' : 'bench:reconcile', body));
    process.stdout.write(`${table.join('\n')}\n`);
    progress(`done in ${seconds} s; bench/RESULTS.md updated`);
  } finally {
    await Promise.all(acknowledgers.map((a) => a.stop()));
    for (const c of children) c.kill('SIGTERM');
    await cluster.stop();
    rmSync(workDir, { recursive: true, force: true });
  }
}

await main();
