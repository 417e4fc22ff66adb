// The pure part of bench:knative: from what one cold or warm change left
// behind (the bench's own clock at the API write, what its watches saw, the
// function's log lines, the process's start from /proc) to the figures and
// their table. No cluster here; bench/knative.ts gathers the inputs.

/** One change made while swarm-assign had no pod: every instant in ms since the epoch (one machine, one clock). */
export interface ColdRun {
  /** The PATCH of the Swarm's scale subresource was sent. */
  readonly requestedAt?: number;
  /** Its answer arrived: the write is in the API server, somewhere since requestedAt. */
  readonly writtenAt: number;
  /** The revision's Deployment went from 0 to ≥ 1 replicas (the autoscaler, poked by the activator holding the request). */
  readonly scaledUpAt?: number;
  /** The pod was first seen (created). */
  readonly podCreatedAt?: number;
  /** The pod was first seen bound to the node. */
  readonly scheduledAt?: number;
  /** The function container's Node process started (/proc/<pid>/stat on the node). */
  readonly processStartAt?: number;
  /** The function logged `listening`. */
  readonly listeningAt?: number;
  /** That event reached the function: the `handled` line's time less its `ms`. */
  readonly receivedAt?: number;
  /** The function logged `handled` for the first event after the write. */
  readonly answeredAt?: number;
}

export interface WarmRun {
  readonly requestedAt?: number;
  readonly writtenAt: number;
  readonly answeredAt?: number;
  /** The `ms` of that `handled` line: the request inside the function. */
  readonly handlerMs?: number;
}

/** The cold path's consecutive parts: name, what it spans, and its two ends. */
export const COLD_SEGMENTS: ReadonlyArray<{ name: string; spans: string; from: keyof ColdRun; to: keyof ColdRun }> = [
  {
    name: 'write → Deployment scaled up',
    spans: "the ApiServerSource's watch, the broker's ingress, channel and filter, Traefik, the activator holding the request and poking the autoscaler, which scales the revision's Deployment",
    from: 'writtenAt',
    to: 'scaledUpAt',
  },
  { name: '→ pod created', spans: "the Deployment and ReplicaSet controllers", from: 'scaledUpAt', to: 'podCreatedAt' },
  { name: '→ pod scheduled', spans: 'the scheduler binding it to the node', from: 'podCreatedAt', to: 'scheduledAt' },
  {
    name: '→ Node process started',
    spans: "the kubelet: sandbox, network (CNI), the image already present (imported, never pulled), queue-proxy's and the function's containers created and started",
    from: 'scheduledAt',
    to: 'processStartAt',
  },
  { name: '→ listening', spans: "Node loading the functions (the image's one bundled file, functions.mjs: the Kubernetes client and all), the HTTP server bound", from: 'processStartAt', to: 'listeningAt' },
  {
    name: '→ event in the function',
    spans: "queue-proxy's readiness probe passing, the activator forwarding the held request through queue-proxy",
    from: 'listeningAt',
    to: 'receivedAt',
  },
  { name: '→ answered', spans: "the reconcile (its API reads and writes; the process's first requests) and the answer", from: 'receivedAt', to: 'answeredAt' },
];

export const durationOf = (run: ColdRun, from: keyof ColdRun, to: keyof ColdRun): number | undefined => {
  const a = run[from];
  const b = run[to];
  return a === undefined || b === undefined ? undefined : b - a;
};

/** The median (the lower middle for an even count) and the maximum, or undefined for none. */
export function p50max(values: ReadonlyArray<number | undefined>): { p50: number; max: number; n: number } | undefined {
  const xs = values.filter((v): v is number => v !== undefined).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  return { p50: xs[Math.floor((xs.length - 1) / 2)]!, max: xs[xs.length - 1]!, n: xs.length };
}

export const seconds = (ms: number | undefined): string => (ms === undefined ? '—' : (ms / 1000).toFixed(2));

/** The write's bracket: from sending the PATCH to its answer, the write somewhere in between. */
export const writeBracket = (runs: ReadonlyArray<{ requestedAt?: number; writtenAt: number }>) =>
  p50max(runs.map((r) => (r.requestedAt === undefined ? undefined : r.writtenAt - r.requestedAt)));

/** A table of per-run seconds: a header, then each row's p50, max and every run's value. */
function runsTable(title: string, runs: number, rows: ReadonlyArray<readonly [string, Array<number | undefined>]>): string[] {
  const row = ([name, values]: readonly [string, Array<number | undefined>]) => {
    const s = p50max(values);
    return `| ${name} | ${seconds(s?.p50)} | ${seconds(s?.max)} | ${values.map(seconds).join(' | ')} |`;
  };
  const each = Array.from({ length: runs }, (_, i) => i);
  return [`| ${title} | p50 | max | ${each.map((i) => `run ${i + 1}`).join(' | ')} |`, `| --- | ---: | ---: | ${each.map(() => '---:').join(' | ')} |`, ...rows.map(row)];
}

/** The cold path's table: one row per part, then the whole, p50 / max over the runs, and each run. */
export function coldTable(runs: readonly ColdRun[]): string[] {
  return runsTable('cold, s', runs.length, [
    ...COLD_SEGMENTS.map((s) => [s.name, runs.map((r) => durationOf(r, s.from, s.to))] as const),
    ['**write → first event answered**', runs.map((r) => durationOf(r, 'writtenAt', 'answeredAt'))],
    ['process start → first event answered', runs.map((r) => durationOf(r, 'processStartAt', 'answeredAt'))],
  ]);
}

export function warmTable(runs: readonly WarmRun[]): string[] {
  return runsTable('warm, s', runs.length, [
    ['**write → event answered**', runs.map((r) => (r.answeredAt === undefined ? undefined : r.answeredAt - r.writtenAt))],
    ['write → event in the function', runs.map((r) => (r.answeredAt === undefined || r.handlerMs === undefined ? undefined : r.answeredAt - r.handlerMs - r.writtenAt))],
    ['in the function (`ms` of `handled`)', runs.map((r) => r.handlerMs)],
  ]);
}

/** The part of the cold path with the largest median, and its share of the median whole. */
export function dominantPart(runs: readonly ColdRun[]): { name: string; spans: string; p50: number; share: number } | undefined {
  const whole = p50max(runs.map((r) => durationOf(r, 'writtenAt', 'answeredAt')));
  if (!whole) return undefined;
  const parts = COLD_SEGMENTS.map((s) => ({ ...s, p50: p50max(runs.map((r) => durationOf(r, s.from, s.to)))?.p50 ?? 0 }));
  const top = parts.reduce((a, b) => (b.p50 > a.p50 ? b : a));
  return { name: top.name.replace(/^→ /, ''), spans: top.spans, p50: top.p50, share: top.p50 / whole.p50 };
}

/** A pino JSON line's message and time, or undefined for anything else (kubectl's own lines, partial lines). */
export function logEntry(line: string): { msg: string; time: number; type?: string; ms?: number } | undefined {
  try {
    const e = JSON.parse(line) as { msg?: unknown; time?: unknown; type?: unknown; ms?: unknown };
    if (typeof e.msg !== 'string' || typeof e.time !== 'number') return undefined;
    return { msg: e.msg, time: e.time, ...(typeof e.type === 'string' ? { type: e.type } : {}), ...(typeof e.ms === 'number' ? { ms: e.ms } : {}) };
  } catch {
    return undefined;
  }
}

/**
 * A process's start in ms since the epoch, from /proc/<pid>/stat's starttime
 * (clock ticks since boot, field 22) and the boot instant (now − /proc/uptime):
 * both on the boot clock, good to a tick (10 ms); /proc/stat's btime is whole seconds.
 */
export function processStartMs(stat: string, uptime: string, nowMs: number, ticksPerSecond: number): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const startTicks = Number(fields[19]); // field 22; fields[0] is field 3 (state)
  const bootMs = nowMs - Number(uptime.split(' ')[0]) * 1000;
  if (!Number.isFinite(startTicks) || !Number.isFinite(bootMs)) throw new Error('unreadable /proc stat or uptime');
  return bootMs + (startTicks / ticksPerSecond) * 1000;
}
