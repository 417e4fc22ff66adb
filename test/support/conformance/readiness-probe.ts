// The kubelet's readiness probe, played by the conformance runner against a
// harness (docs/worker-protocol.md W30): one probe each `periodSeconds`, the
// pod NotReady at the `failureThreshold`-th failure in a row. A probe fails
// when it is answered not ready, or not at all within PROBE_TIMEOUT_MS: a
// frozen process answers nothing. That timeout is shorter than the kubelet's
// least (1 s) on purpose: the window played is then W30's own,
// (failureThreshold − 1) × periodSeconds, and hardly more, the harshest a
// worker may meet.

import { sleep } from './wait.js';

export interface ReadinessProbe {
  readonly periodSeconds: number;
  readonly failureThreshold: number;
}

export const PROBE_TIMEOUT_MS = 250;

/** One probe: true when the harness answered ready within `timeoutMs`. */
export type ProbeOnce = (timeoutMs: number) => Promise<boolean>;

/**
 * Probes from now until the kubelet would turn the pod NotReady; returns when,
 * as ms since the first probe. Throws after `giveUpMs` without that.
 */
export async function probeUntilNotReady(probe: ReadinessProbe, probeOnce: ProbeOnce, giveUpMs: number): Promise<number> {
  const began = Date.now();
  let failures = 0;
  for (let n = 0; ; n++) {
    await sleep(began + n * probe.periodSeconds * 1000 - Date.now());
    failures = (await probeOnce(PROBE_TIMEOUT_MS)) ? 0 : failures + 1;
    if (failures >= probe.failureThreshold) return Date.now() - began;
    if (Date.now() - began > giveUpMs) throw new Error(`the readiness probe failed ${failures} time(s) in a row in ${giveUpMs} ms, not ${probe.failureThreshold}`);
  }
}
