// bench:failover's idle check: with Knative's default autoscaler windows
// (stable-window 60 s, scale-to-zero-grace-period 30 s; the test stack runs
// 6 s and 6 s), after one change to a Swarm whose workers heartbeat, how long
// until both functions run zero pods, and whether they stay there while the
// workers keep renewing. The namespace's resync PingSource runs as a default
// install has it (knative/base/pingsource.yaml's schedule), so what wakes a
// function at rest shows too.
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { kubectl, SYSTEM_NAMESPACE } from '../test/harness/swarm-install.js';
import { shippedResyncSchedule } from '../test/support/resync-schedule.js';

const FUNCTIONS = ['swarm-assign', 'swarm-restart'] as const;

export interface IdleRun {
  /** Seconds from the change until both functions first ran zero pods; undefined: not within the watch. */
  readonly toZeroSeconds?: number;
  /** Per function, pods it started during the watch (each a cold start from zero, or a scale-up). */
  readonly podsStarted: Record<string, number>;
  /** Seconds of the watch after the first zero during which both ran zero pods. */
  readonly zeroSeconds: number;
  readonly watchedSeconds: number;
}

/** Knative Serving's own defaults for the two windows, set on the cluster's config-autoscaler. */
export async function defaultAutoscalerWindows(kubeconfig: string): Promise<void> {
  await kubectl(kubeconfig, ['-n', 'knative-serving', 'patch', 'configmap', 'config-autoscaler', '--type', 'merge', '-p', JSON.stringify({ data: { 'stable-window': '60s', 'scale-to-zero-grace-period': '30s' } })]);
}

/** The namespace's resync PingSource, as `npm run deploy -- --watch-namespace` renders it (the shipped schedule); returns the schedule. */
export async function resyncPingSource(kubeconfig: string, namespace: string): Promise<string> {
  const schedule = shippedResyncSchedule();
  const source = {
    apiVersion: 'sources.knative.dev/v1',
    kind: 'PingSource',
    metadata: { name: `swarm-resync-${namespace}`, namespace: SYSTEM_NAMESPACE },
    spec: { schedule, contentType: 'application/json', data: JSON.stringify({ namespace }), sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'swarm' } } },
  };
  await kubectl(kubeconfig, ['apply', '-f', '-'], JSON.stringify(source));
  return schedule;
}

/** Runs `change`, then samples the functions' pods every second for `watchMs`. */
export async function idleAfter(kubeconfig: string, change: () => Promise<unknown>, watchMs: number, progress: (line: string) => void): Promise<IdleRun> {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  const seen = new Map<string, Set<string>>(FUNCTIONS.map((f) => [f, new Set<string>()]));
  const running = async (): Promise<Record<string, string[]>> => {
    const out: Record<string, string[]> = {};
    for (const f of FUNCTIONS) {
      const pods = (await core.listNamespacedPod({ namespace: SYSTEM_NAMESPACE, labelSelector: `serving.knative.dev/service=${f}` })).items;
      out[f] = pods.filter((p) => p.status?.phase === 'Running' || p.status?.phase === 'Pending').map((p) => p.metadata!.uid!);
    }
    return out;
  };
  const before = await running();
  const start = Date.now();
  await change();
  let firstZero: number | undefined;
  let zeroMs = 0;
  let lastSample = Date.now();
  let lastZero = false;
  let lastLine = 0;
  while (Date.now() - start < watchMs) {
    await new Promise((r) => setTimeout(r, 1000));
    const now = await running();
    for (const f of FUNCTIONS) for (const uid of now[f]!) if (!before[f]!.includes(uid)) seen.get(f)!.add(uid);
    const zero = FUNCTIONS.every((f) => now[f]!.length === 0);
    const t = Date.now();
    if (lastZero && firstZero !== undefined) zeroMs += t - lastSample;
    if (zero && firstZero === undefined) firstZero = t;
    lastZero = zero;
    lastSample = t;
    if (t - lastLine > 30_000) {
      lastLine = t;
      progress(`idle: ${Math.round((t - start) / 1000)} s after the change: ${FUNCTIONS.map((f) => `${f} ${now[f]!.length} pod(s)`).join(', ')}`);
    }
  }
  return {
    ...(firstZero === undefined ? {} : { toZeroSeconds: (firstZero - start) / 1000 }),
    podsStarted: Object.fromEntries([...seen].map(([f, uids]) => [f, uids.size])),
    zeroSeconds: zeroMs / 1000,
    watchedSeconds: (Date.now() - start) / 1000,
  };
}
