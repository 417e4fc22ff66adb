// The coverage recorder's shell: gathers the workers' own reports and the
// ends of their pods, and hands them to the pure core (core.ts).
//
//   CoverageRecorder   in memory: feed it log lines per source (a pod uid, or
//                      any name for a local process) and source ends.
//   recordWorkerPods   watches the worker pods of a namespace (label selector)
//                      and follows each pod's container log from its start
//                      (the Log API with follow and timestamps), so the reports
//                      of pods deleted later are kept.
import { Writable } from 'node:stream';
import { KubeConfig, Log, Watch, type V1Pod } from '@kubernetes/client-node';
import { clockOffset, coverageOf, lastChangeIn, ownersAt, ownershipsOf, type CoverageReport, type Crash, type ObservedReport, type Ownerships, type SourceEnd, type Span } from './core.js';
import { parseReportLine, type ParsedReport } from './log-line.js';

export class CoverageRecorder {
  /** Every report, in arrival order, with the source it came from. */
  readonly reports: Array<ObservedReport & ParsedReport & { arrivedAt?: number }> = [];
  readonly ends: SourceEnd[] = [];
  /** Containers that died and were restarted in place: the source goes on. */
  readonly crashes: Crash[] = [];
  /** Things the recorder could not observe (a pod gone before its log was read): a report is only as good as these are few. */
  readonly misses: string[] = [];

  /** Takes one log line from `source`; returns the report it held, if any. */
  ingest(source: string, line: string): ParsedReport | undefined {
    const parsed = parseReportLine(line);
    if (parsed) this.reports.push({ source, ...parsed });
    return parsed;
  }

  end(end: SourceEnd): void {
    this.ends.push(end);
  }

  crash(crash: Crash): void {
    if (!this.crashes.some((c) => c.source === crash.source && c.at === crash.at)) this.crashes.push(crash);
  }

  /** Per-source clock offsets, from the runtime's stamps where the lines had them. */
  clockOffsets(): Record<string, number> {
    const samples = new Map<string, Array<{ time: number; loggedAt: number }>>();
    for (const r of this.reports) {
      if (r.loggedAt === undefined) continue;
      samples.set(r.source, [...(samples.get(r.source) ?? []), { time: r.time, loggedAt: r.loggedAt }]);
    }
    return Object.fromEntries([...samples].map(([source, list]) => [source, clockOffset(list)]));
  }

  ownerships(): Ownerships {
    return ownershipsOf(this.reports, this.ends, { clockOffsets: this.clockOffsets(), crashes: this.crashes });
  }

  report(jobs: readonly string[], window: Span): CoverageReport {
    return coverageOf(this.ownerships(), jobs, window);
  }

  /**
   * For a failed step: every report and source end touching `jobs` around `window`, one line
   * each, times in ms from the window's start (worker clock; arrival at the recorder in brackets).
   */
  explain(jobs: readonly string[], window: Span, marginMs = 60_000): string[] {
    const rel = (t: number) => `${t - window.from >= 0 ? '+' : ''}${t - window.from}`;
    const wanted = new Set(jobs);
    const podOf = new Map(this.reports.map((r) => [r.source, r.pod ?? r.source]));
    const sourcesOfJobs = new Set(this.reports.filter((r) => r.job !== undefined && wanted.has(r.job)).map((r) => r.source));
    const near = (t: number) => t >= window.from - marginMs && t <= window.to + marginMs;
    const lines = this.reports
      .filter((r) => near(r.time) && ((r.job !== undefined && wanted.has(r.job)) || (r.job === undefined && sourcesOfJobs.has(r.source))))
      .map((r) => `${rel(r.time)} [${r.arrivedAt === undefined ? '?' : rel(r.arrivedAt)}] ${podOf.get(r.source)} (${r.source.slice(0, 8)}) ${r.event}${r.job ? ` ${r.job}` : ''}${r.version === undefined ? '' : ` v${r.version}`}`);
    const ends = this.ends.filter((e) => sourcesOfJobs.has(e.source) && near(e.at)).map((e) => `${rel(e.at)} ${podOf.get(e.source)} (${e.source.slice(0, 8)}) source ${e.how}`);
    return [...lines, ...ends, ...this.misses.map((m) => `miss: ${m}`)];
  }

  /** When the state the workers run at `window.to` began (see core.ts lastChangeIn). */
  lastChangeIn(window: Span): number {
    return lastChangeIn(this.ownerships(), window);
  }

  /** job → sources running it at `t` (default now), by their own reports. */
  ownersAt(t = Date.now()): Map<string, string[]> {
    return ownersAt(this.ownerships(), t);
  }

  /**
   * What runs at `t` (default now), by the workers' own reports: pod name → its
   * jobs, sorted (the shape of an Assignment), and the jobs run by more than one source.
   */
  running(t = Date.now()): { byPod: Record<string, string[]>; duplicated: string[] } {
    const podOf = new Map(this.reports.map((r) => [r.source, r.pod ?? r.source]));
    const byPod: Record<string, string[]> = {};
    const duplicated: string[] = [];
    for (const [job, sources] of this.ownersAt(t)) {
      if (sources.length > 1) duplicated.push(job);
      for (const source of sources) (byPod[podOf.get(source) ?? source] ??= []).push(job);
    }
    for (const jobs of Object.values(byPod)) jobs.sort();
    return { byPod, duplicated: duplicated.sort() };
  }
}

/** Splits a byte stream into lines for `onLine`; a last line without a newline is kept too. */
export function lineSink(onLine: (line: string) => void): Writable {
  let partial = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, callback) {
      const lines = (partial + chunk.toString()).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) if (line) onLine(line);
      callback();
    },
    final(callback) {
      if (partial) onLine(partial);
      partial = '';
      callback();
    },
  });
}

export interface WorkerPodsOptions {
  readonly kubeconfig: string;
  readonly namespace: string;
  /** e.g. `app=swarm-worker` */
  readonly labelSelector: string;
  /** The worker's container (default: the pod's first container). */
  readonly container?: string;
  readonly onReport?: (pod: string, report: ParsedReport) => void;
}

/** A pod incarnation the recorder saw. */
export interface PodSeen {
  readonly name: string;
  readonly uid: string;
  readonly firstSeen: number;
  deletedAt?: number;
  /** Lines read from its current container's log. */
  lines: number;
  restartCount: number;
}

export interface WorkerPodsRecorder extends CoverageRecorder {
  readonly pods: Map<string, PodSeen>;
  /** Waits until every ended pod's log has been read to its end (or `timeoutMs` passed). */
  settle(timeoutMs?: number): Promise<void>;
  stop(): void;
}

export async function recordWorkerPods(options: WorkerPodsOptions): Promise<WorkerPodsRecorder> {
  const kc = new KubeConfig();
  kc.loadFromFile(options.kubeconfig);
  const logs = new Log(kc);
  const recorder = new CoverageRecorder();
  const pods = new Map<string, PodSeen>();
  /** uid → the follow in progress (its container instance and when its stream ends). */
  const following = new Map<string, { containerId: string; abort?: AbortController; done: Promise<void> }>();
  /** uid → the reports read from its logs (time, event, job): each is kept once. */
  const readLines = new Map<string, Set<string>>();
  /** uid → the container instance running now, by the latest status seen (none while it is dead or backing off). */
  const runningNow = new Map<string, string | undefined>();
  let stopped = false;

  const containerOf = (pod: V1Pod) => {
    const statuses = pod.status?.containerStatuses ?? [];
    const name = options.container ?? pod.spec?.containers[0]?.name;
    return statuses.find((c) => c.name === name);
  };

  /**
   * Follows one container instance's log. The Log API names the container, not
   * the instance: it serves the running one, or the last one to end. So a
   * stream cut short is picked up again only while the same instance still runs;
   * once it has ended, its log was read to the end.
   */
  const follow = (pod: V1Pod, containerId: string, restartCount: number): void => {
    const { name, uid } = pod.metadata as { name: string; uid: string };
    const seen = pods.get(uid)!;
    seen.restartCount = restartCount;
    seen.lines = 0;
    let finish: () => void = () => undefined;
    const entry: { containerId: string; abort?: AbortController; done: Promise<void> } = {
      containerId,
      done: new Promise<void>((resolve) => (finish = resolve)),
    };
    following.set(uid, entry);
    const read = readLines.get(uid) ?? new Set<string>();
    readLines.set(uid, read);
    const attempt = async (skip: number, tries: number): Promise<void> => {
      let index = 0;
      const sink = lineSink((line) => {
        if (index++ < skip) return; // already read by an earlier, interrupted follow
        seen.lines++;
        const parsed = parseReportLine(line);
        // The Log API follows by name: a line from another incarnation of the name is not this pod's.
        if (!parsed || (parsed.uid !== undefined && parsed.uid !== uid)) return;
        // Read twice (a follow that raced a restart in place onto the next instance's log): kept once.
        const key = `${parsed.time} ${parsed.event} ${parsed.job ?? ''}`;
        if (read.has(key)) return;
        read.add(key);
        recorder.reports.push({ source: uid, ...parsed, arrivedAt: Date.now() });
        options.onReport?.(name, parsed);
      });
      const ended = new Promise<void>((resolve) => sink.on('finish', resolve).on('close', resolve).on('error', () => resolve()));
      try {
        entry.abort = await logs.log(options.namespace, name, containerOfName(pod), sink, { follow: true, timestamps: true });
        await ended;
      } catch {
        // Not ready to serve logs yet (ContainerCreating) or already gone: retried below while the pod lives.
      }
      // A follow can end early (the kubelet or a proxy closes it): pick up where it stopped,
      // unless the instance ended (its log is read) or was never seen running (not ready to serve yet).
      await new Promise((r) => setTimeout(r, 500));
      const live = !stopped && seen.deletedAt === undefined && following.get(uid) === entry;
      const sameInstance = runningNow.get(uid) === containerId || (seen.lines === 0 && runningNow.get(uid) === undefined);
      if (live && sameInstance && !recorder.ends.some((e) => e.source === uid) && tries < 200) return attempt(seen.lines, tries + 1);
      if (seen.lines === 0 && seen.deletedAt !== undefined) recorder.misses.push(`${name} (${uid}): gone before its log could be read`);
    };
    const containerOfName = (p: V1Pod) => options.container ?? p.spec?.containers[0]?.name ?? '';
    void attempt(0, 0).finally(finish);
  };

  const onPod = (phase: string, pod: V1Pod): void => {
    const { name, uid } = pod.metadata as { name: string; uid: string };
    if (!name || !uid) return;
    const now = Date.now();
    if (!pods.has(uid)) pods.set(uid, { name, uid, firstSeen: now, lines: 0, restartCount: -1 });
    const seen = pods.get(uid)!;
    const status = containerOf(pod);
    runningNow.set(uid, status?.state?.running ? status.containerID : undefined);
    const started = status && (status.state?.running || status.state?.terminated || status.lastState?.terminated);
    // A new instance (the first seen, or one restarted in place): followed from its start.
    if (started && status.containerID && following.get(uid)?.containerId !== status.containerID) follow(pod, status.containerID, status.restartCount);
    const finishedAt = status?.state?.terminated?.finishedAt;
    // Final only when the pod is going away; otherwise the container is restarted in place (a crash, below).
    const going = phase === 'DELETED' || pod.metadata?.deletionTimestamp !== undefined || ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '');
    if (going && finishedAt && !recorder.ends.some((e) => e.source === uid && e.how === 'terminated')) {
      recorder.end({ source: uid, at: new Date(finishedAt).getTime(), how: 'terminated' });
    }
    // A container that died while the pod stays: restarted in place (now, or after the kubelet's back-off).
    if (!going && finishedAt) recorder.crash({ source: uid, at: new Date(finishedAt).getTime() });
    const lastFinished = status?.lastState?.terminated?.finishedAt;
    if (lastFinished) recorder.crash({ source: uid, at: new Date(lastFinished).getTime() });
    if (phase === 'DELETED') {
      seen.deletedAt = now;
      if (!recorder.ends.some((e) => e.source === uid)) recorder.end({ source: uid, at: now, how: 'deleted' });
      if (!following.has(uid)) recorder.misses.push(`${name} (${uid}): deleted before its container was seen running`);
    }
  };

  const watch = new Watch(kc);
  const path = `/api/v1/namespaces/${options.namespace}/pods`;
  let watchAbort: AbortController | undefined;
  const startWatch = async (): Promise<void> => {
    // No resourceVersion: the watch starts with every existing pod as ADDED. It is
    // re-opened when the server ends it; pods already known are not re-followed.
    watchAbort = await watch.watch(path, { labelSelector: options.labelSelector }, onPod, () => {
      if (!stopped) setTimeout(() => void startWatch().catch(() => undefined), 200);
    });
  };
  await startWatch();

  return Object.assign(recorder, {
    pods,
    async settle(timeoutMs = 30_000): Promise<void> {
      const ended = [...following].filter(([uid]) => pods.get(uid)?.deletedAt !== undefined || recorder.ends.some((e) => e.source === uid));
      await Promise.race([Promise.all(ended.map(([, f]) => f.done)), new Promise((r) => setTimeout(r, timeoutMs))]);
    },
    stop(): void {
      stopped = true;
      watchAbort?.abort();
      for (const f of following.values()) f.abort?.abort();
    },
  });
}
