// Failure detection, protocol 2 (docs/failure-detection.md): what Swarm
// publishes to its workers beside config.yml, and the heartbeat Lease each
// worker renews. One home for the names and the timing arithmetic, so the SDK,
// Swarm and the simulator agree.
//
// Why another key rather than fields in config.yml: a protocol-1 worker
// rejects unknown fields there (docs/worker-protocol.md W4, §9).

/** The ConfigMap key (a file beside config.yml in the mounted volume) with the failover settings. */
export const FAILOVER_KEY = 'failover.yml';

/**
 * The heartbeat Lease's label (value: the pool's name). Not the Swarm label on
 * purpose: the ApiServerSource delivers only Leases carrying k8slab.info/swarm,
 * so a renewal wakes no function.
 */
export const HEARTBEAT_LABEL = 'k8slab.info/heartbeat';

/** The heartbeat Lease of a pod: a Lease of its own, apart from the acknowledgement named after the pod. */
export const heartbeatLeaseName = (pod: string): string => `${pod}.heartbeat`;

/** The protocol a worker announces while it heartbeats (docs/worker-protocol.md §8). */
export const FAILOVER_PROTOCOL = '2';

export type FailoverHandoff = 'MakeBeforeBreak' | 'BreakBeforeMake';

export interface FailoverSettings {
  /** The heartbeat Lease's duration (spec.failover.leaseSeconds). */
  readonly leaseSeconds: number;
  /** The Swarm's handoff: under BreakBeforeMake a worker that lost its heartbeat stops its jobs. */
  readonly handoff: FailoverHandoff;
}

export const FAILOVER_LEASE_SECONDS = { default: 15, min: 3, max: 300 } as const;

/** Renew every third of the lease; give up (fence) at two thirds, like leader election's renew deadline. */
export interface FailoverTimings {
  readonly renewIntervalMs: number;
  /** A renewal that failed is tried again this soon. */
  readonly retryMs: number;
  /** Since the start of the last renewal that succeeded: past this, the worker fences itself. */
  readonly renewDeadlineMs: number;
  readonly leaseMs: number;
}

export function failoverTimings(leaseSeconds: number): FailoverTimings {
  const leaseMs = leaseSeconds * 1000;
  return { leaseMs, renewIntervalMs: Math.round(leaseMs / 3), retryMs: Math.min(1000, Math.round(leaseMs / 15)), renewDeadlineMs: Math.round((leaseMs * 2) / 3) };
}

/**
 * The smallest readiness-probe window ((failureThreshold − 1) × periodSeconds)
 * under which a pod turns NotReady only after its worker's renew deadline has
 * passed by the worker's own clock, with the two clocks' rates apart by at
 * most `drift` (docs/failure-detection.md: the arithmetic).
 */
export function minimumProbeWindowSeconds(leaseSeconds: number, drift = 0.02): number {
  return (failoverTimings(leaseSeconds).renewDeadlineMs / 1000) * ((1 + drift) / (1 - drift));
}

export function renderFailover(settings: FailoverSettings): string {
  return `leaseSeconds: ${settings.leaseSeconds}\nhandoff: ${settings.handoff}\n`;
}

/** failover.yml in: exactly the two fields renderFailover writes; anything else is refused as a whole. */
export function parseFailover(text: string): FailoverSettings {
  const fields = new Map<string, string>();
  for (const raw of text.split('\n')) {
    const line = raw.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const m = /^([A-Za-z]+):\s*(\S+)$/.exec(line);
    if (!m || fields.has(m[1]!)) throw new Error(`${FAILOVER_KEY}: cannot read line ${JSON.stringify(raw)}`);
    fields.set(m[1]!, m[2]!);
  }
  const lease = Number(fields.get('leaseSeconds'));
  const handoff = fields.get('handoff');
  if (!Number.isInteger(lease) || lease < FAILOVER_LEASE_SECONDS.min || lease > FAILOVER_LEASE_SECONDS.max) {
    throw new Error(`${FAILOVER_KEY}: leaseSeconds must be an integer from ${FAILOVER_LEASE_SECONDS.min} to ${FAILOVER_LEASE_SECONDS.max}`);
  }
  if (handoff !== 'MakeBeforeBreak' && handoff !== 'BreakBeforeMake') throw new Error(`${FAILOVER_KEY}: handoff must be MakeBeforeBreak or BreakBeforeMake`);
  if (fields.size !== 2) throw new Error(`${FAILOVER_KEY}: unknown field (expected leaseSeconds and handoff)`);
  return { leaseSeconds: lease, handoff };
}
