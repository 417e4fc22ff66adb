// Failure detection in the simulated cluster (docs/failure-detection.md), for
// a Swarm with spec.failover and workers that acknowledge (protocol 2): each
// worker renews its heartbeat every third of the lease by its own clock (which
// runs fast or slow by up to DRIFT), fences by the SDK's own rules
// (sdk/typescript/src/fence.ts) at the renew deadline, and the kubelet's
// readiness probe (every PROBE.periodMs, NotReady after PROBE.failureThreshold
// failures; a frozen process times out) turns that into a Pod change. The
// faults: a frozen process (SIGSTOP … SIGCONT), a partition (its API calls
// fail; the kubelet still delivers its volume), a hung job (its health check
// fails); the liveness probe restarts a container frozen or hung past
// LIVENESS_MS. The checker learns what really runs: a frozen process's jobs
// run nothing until it resumes, and it fences (by its clock) before they do.
import { failoverTimings, parse, type FailoverSettings } from '../../lib/workerconfig/index.js';
import { admit, fenceAt, freshAgain, readiness, STARTING, UNFENCED, breaksFirst, type Fence } from '../../sdk/typescript/src/fence.js';
import type { Rng } from './rng.js';
import type { Timeline } from './timeline.js';

/** The sample's probe (knative/samples/statefulset.yaml) and the stated drift bound. */
export const PROBE = { periodMs: 1000, failureThreshold: 12, timeoutMs: 1000 } as const;
export const DRIFT = 0.02;
/** livenessProbe: periodSeconds 10 × failureThreshold 3. */
const LIVENESS_MS = 30_000;

/** What the model needs of a worker process and of the cluster around it (cluster.ts). */
export interface FailoverProc {
  readonly id: string;
  readonly podUid: string;
  readonly alive: boolean;
  readonly running: ReadonlySet<string>;
  readonly configVersion: number | undefined;
  readonly loaded: boolean;
  readonly stopping: boolean;
}

export interface FailoverHost {
  /** Stop every job the process runs (its share held as none until the fence lifts). */
  stopAll(proc: FailoverProc): void;
  /** Apply this config text now (it was held back, or arrived while frozen). */
  load(proc: FailoverProc, text: string | undefined): void;
  /** Write its acknowledgement again (one given up while unreachable or frozen). */
  reacknowledge(proc: FailoverProc): void;
  setReady(proc: FailoverProc, ready: boolean): void;
  /** The kubelet restarts the container (liveness). */
  restart(proc: FailoverProc, how: string): void;
}

export interface FailoverTruth {
  failed(proc: string, how: string): void;
  /** Its jobs run nothing from now (frozen). */
  suspended(proc: string): void;
  /** They run again: the ones it still runs after it resumed. */
  resumed(proc: string, jobs: readonly string[]): void;
}

interface Beat {
  drift: number;
  lastRenew?: number;
  stale: boolean;
  fence: Fence;
  frozenUntil: number;
  cutUntil: number;
  hungUntil: number;
  held?: { text: string | undefined };
  /** Arrived while frozen: applied when it resumes. */
  stash?: { text: string | undefined };
  failingSince?: number;
  renewTimer: number;
}

export class FailoverModel {
  private readonly beats = new Map<string, Beat>();

  constructor(
    readonly settings: () => FailoverSettings,
    private readonly timeline: Timeline,
    private readonly rng: Rng,
    private readonly truth: FailoverTruth,
    readonly host: FailoverHost,
  ) {}

  private t = () => failoverTimings(this.settings().leaseSeconds);
  private beat = (proc: FailoverProc): Beat | undefined => this.beats.get(proc.id);
  private frozen = (b: Beat) => this.timeline.now < b.frozenUntil;
  /** Renewed within the deadline by its own clock (it runs at 1 + drift). */
  private fresh = (b: Beat) => b.lastRenew !== undefined && (this.timeline.now - b.lastRenew) * (1 + b.drift) < this.t().renewDeadlineMs;

  /** A container started: it renews at once (breaking first, it runs nothing before). */
  started(proc: FailoverProc): void {
    const b: Beat = { drift: this.rng.next() * 2 * DRIFT - DRIFT, stale: true, fence: breaksFirst(this.settings()) ? STARTING : UNFENCED, frozenUntil: -1, cutUntil: -1, hungUntil: -1, renewTimer: 0 };
    this.beats.set(proc.id, b);
    this.tick(proc);
  }

  reachable(proc: FailoverProc): boolean {
    const b = this.beat(proc);
    return !b || (!this.frozen(b) && this.timeline.now >= b.cutUntil);
  }

  /** True: the worker does not apply `text` now (frozen: later; fenced: until it may resume). */
  intercept(proc: FailoverProc, text: string | undefined): boolean {
    const b = this.beat(proc);
    if (!b) return false;
    if (this.frozen(b)) {
      b.stash = { text };
      return true;
    }
    // The SDK's own rule (fence.ts admit): held while fenced; under MakeBeforeBreak the fence lifts.
    const version = (): number | undefined | 'unreadable' => {
      try {
        return text === undefined ? undefined : parse(text).version;
      } catch {
        return 'unreadable';
      }
    };
    const next = admit(b.fence, breaksFirst(this.settings()), this.fresh(b), version);
    if (!next) {
      b.held = { text };
      return true;
    }
    const wasFenced = b.fence.fenced;
    b.fence = next;
    b.held = undefined;
    if (wasFenced) this.recheck(proc);
    return false;
  }

  /** Readiness as the worker answers it (a frozen one answers nothing). */
  probeOk(proc: FailoverProc): boolean {
    const b = this.beat(proc);
    if (!b) return true;
    if (this.frozen(b)) return false;
    const healthy = this.timeline.now >= b.hungUntil;
    return readiness({ settings: this.settings(), fresh: this.fresh(b), healthy, fence: b.fence, fencing: false, loaded: proc.loaded, stopping: proc.stopping }).ready;
  }

  private tick(proc: FailoverProc): void {
    const b = this.beat(proc);
    if (!b || !proc.alive) return;
    const seq = ++b.renewTimer;
    if (this.frozen(b)) return; // resumes at thaw
    const ok = this.timeline.now >= b.hungUntil && this.timeline.now >= b.cutUntil;
    if (ok) {
      b.lastRenew = this.timeline.now;
      // The deadline timer (by its own clock).
      this.timeline.after(Math.ceil(this.t().renewDeadlineMs / (1 + b.drift)), () => this.judge(proc));
    }
    this.judge(proc);
    const next = (ok ? this.t().renewIntervalMs : this.t().retryMs) / (1 + b.drift);
    this.timeline.after(Math.ceil(next), () => b.renewTimer === seq && this.tick(proc));
  }

  private judge(proc: FailoverProc): void {
    const b = this.beat(proc);
    if (!b || !proc.alive || this.frozen(b)) return;
    const fresh = this.fresh(b);
    // Stale and not fenced, now breaking first (the handoff switched while it was stale): it fences
    // at its next beat, as the SDK does when it reads the new handoff (sdk/typescript/src/failover.ts).
    const fenceNow = !fresh && b.stale && b.lastRenew !== undefined && !b.fence.fenced && breaksFirst(this.settings());
    if ((!fresh && !b.stale) || fenceNow) {
      b.stale = true;
      if (breaksFirst(this.settings())) {
        if (proc.running.size > 0) this.truth.failed(proc.id, 'fenced: heartbeat stale');
        b.fence = fenceAt(b.fence, proc.configVersion, proc.running.size);
        this.host.stopAll(proc);
      }
    } else if (fresh && b.stale) {
      b.stale = false;
      if (b.held) this.host.load(proc, b.held.text);
      else {
        b.fence = freshAgain(b.fence);
        this.host.reacknowledge(proc);
      }
    }
    this.recheck(proc);
  }

  /** The kubelet's readiness probe, by events: NotReady after failureThreshold failures, Ready at the first success. */
  recheck(proc: FailoverProc): void {
    const b = this.beat(proc);
    if (!b || !proc.alive) return;
    const phase = this.rng.int(0, PROBE.periodMs - 1);
    if (!this.probeOk(proc)) {
      if (b.failingSince !== undefined) return;
      const since = this.timeline.now + phase + (this.frozen(b) ? PROBE.timeoutMs : 0);
      b.failingSince = since;
      this.timeline.schedule(since + (PROBE.failureThreshold - 1) * PROBE.periodMs, () => {
        if (b.failingSince === since && proc.alive) this.host.setReady(proc, false);
      });
      return;
    }
    b.failingSince = undefined;
    this.timeline.after(phase, () => proc.alive && b.failingSince === undefined && this.probeOk(proc) && this.host.setReady(proc, true));
  }

  // --- faults -----------------------------------------------------------------
  freeze(proc: FailoverProc, forMs: number): void {
    const b = this.beat(proc);
    if (!b || this.frozen(b)) return;
    b.frozenUntil = this.timeline.now + forMs;
    this.truth.suspended(proc.id);
    this.recheck(proc);
    if (forMs > LIVENESS_MS) this.timeline.after(LIVENESS_MS + this.rng.int(0, 10_000), () => proc.alive && this.frozen(b) && this.host.restart(proc, 'frozen: restarted by its liveness probe'));
    this.timeline.schedule(b.frozenUntil, () => {
      if (!proc.alive) return;
      // SIGCONT: the deadline first (W28), then what it runs, then what arrived meanwhile.
      this.judge(proc);
      this.truth.resumed(proc.id, [...proc.running]);
      const stash = b.stash;
      b.stash = undefined;
      if (stash) this.host.load(proc, stash.text);
      this.host.reacknowledge(proc);
      this.tick(proc);
    });
  }

  partition(proc: FailoverProc, forMs: number): void {
    const b = this.beat(proc);
    if (!b) return;
    b.cutUntil = Math.max(b.cutUntil, this.timeline.now + forMs);
    const until = b.cutUntil;
    this.timeline.schedule(until, () => {
      if (!proc.alive || b.cutUntil !== until) return;
      this.host.reacknowledge(proc);
      this.tick(proc);
    });
  }

  hang(proc: FailoverProc, forMs: number): void {
    const b = this.beat(proc);
    if (!b) return;
    b.hungUntil = Math.max(b.hungUntil, this.timeline.now + forMs);
    this.recheck(proc);
    if (forMs > LIVENESS_MS) this.timeline.after(LIVENESS_MS + this.rng.int(0, 10_000), () => proc.alive && this.timeline.now < b.hungUntil && this.host.restart(proc, 'hung job: restarted by its liveness probe'));
    this.timeline.schedule(b.hungUntil, () => {
      if (!proc.alive) return;
      this.recheck(proc);
      this.tick(proc);
    });
  }

  /** The announced protocol in its acknowledgement. */
  readonly protocol = '2';
}
