// The invariants, checked after every step against the simulator's own record
// of the truth: which worker process really runs which job, fed by the world
// as it happens. It imports nothing from lib/ or examples/ and never asks
// Swarm's code what it thinks: status is read as plain data and judged against
// this record.

export interface Violation {
  invariant: 'coverage' | 'two-owners' | 'status' | 'max-unavailable' | 'convergence' | 'defect';
  at: number;
  detail: string;
}

export interface Windows {
  /** After an unplanned failure, its jobs may have no running owner this long (ms). */
  failoverMs: number;
}

interface Snapshot {
  at: number;
  /** Jobs with a running owner whose acknowledgement of them is in the API (acknowledging pools), or any running owner (others). */
  covered: Set<string>;
  jobs: string[];
}

/** A worker's share as the ConfigMap in the API says it, read as plain data by the world. */
export interface ShareView {
  jobs: readonly string[];
  releasing?: readonly string[];
}

export class Checker {
  readonly violations: Violation[] = [];
  /** job → processes running it */
  private readonly owners = new Map<string, Set<string>>();
  /** process → jobs its acknowledgement in the API names */
  private readonly acked = new Map<string, Set<string>>();
  /** Jobs that have had a running owner since they were (last) added to the spec. */
  private readonly established = new Set<string>();
  /**
   * A job put back in the spec while processes still ran it from before its removal: those runs are what the
   * removal stops, so they do not establish it. A job put back is a new job (make-before-break is about moves):
   * a process that starts it from then on does.
   */
  private readonly leftovers = new Map<string, ReadonlySet<string>>();
  /** Jobs excused from coverage until then (an unplanned failure). */
  private readonly excused = new Map<string, number>();
  /**
   * Jobs excused when an event was lost: the event that would have started their repair may be the one, so
   * they stay excused until the next resync (the PingSource, every five minutes) reaches assign, and for the
   * failover window after it: at-least-once delivery with losses promises repair by resync, no sooner.
   */
  private readonly awaitingResync = new Set<string>();
  /** Under BreakBeforeMake: jobs seen with at most one owner (from then on, never two). */
  private readonly single = new Set<string>();
  private jobs = new Set<string>();
  /** Jobs that ask for a worker of their own. */
  private dedicated = new Set<string>();
  /** process → the worker (pod name) it runs as */
  private readonly procWorker = new Map<string, string>();
  handoff: 'MakeBeforeBreak' | 'BreakBeforeMake' = 'MakeBeforeBreak';
  acknowledging = true;
  maxUnavailable = 1;
  /**
   * The Swarm is refused for its pool (hot reload whose workers do not acknowledge: AcknowledgementRequired),
   * since the run began or since `refusedAt`: it promises nothing for its jobs, only to say so.
   */
  private refusal?: { fromStart: boolean };
  /** Worker slots Swarm took out of service (its pod deleted by Swarm), until a pod of that name is Ready again. */
  private readonly outBySwarm = new Set<string>();

  constructor(
    private readonly now: () => number,
    private readonly windows: Windows,
  ) {}

  private fail(invariant: Violation['invariant'], detail: string): void {
    if (this.violations.some((v) => v.invariant === invariant && v.detail === detail)) return;
    this.violations.push({ invariant, at: this.now(), detail });
  }

  // --- what the world reports ---------------------------------------------------
  setJobs(jobs: readonly string[], dedicated: readonly string[] = []): void {
    this.dedicated = new Set(dedicated);
    const next = new Set(jobs);
    for (const j of this.jobs) if (!next.has(j)) this.established.delete(j);
    for (const j of next) if (!this.jobs.has(j) && this.owners.get(j)?.size) this.leftovers.set(j, new Set(this.owners.get(j)));
    for (const j of this.leftovers.keys()) if (!next.has(j)) this.leftovers.delete(j);
    this.jobs = next;
  }

  /** The handoff the Swarm was created with: immutable (the API refuses a change, docs/design.md), so set once. */
  setHandoff(handoff: 'MakeBeforeBreak' | 'BreakBeforeMake'): void {
    this.handoff = handoff;
  }

  /** Whether the Swarm, as now specified over its pool, is refused (no promise for its jobs; status says why). */
  setRefused(refused: boolean): void {
    if (refused && !this.refusal) {
      this.refusal = { fromStart: this.now() === 0 };
      // What two owners it leaves behind are not its doing: never two again counts from the next single owner.
      this.single.clear();
    } else if (!refused) this.refusal = undefined;
  }

  started(proc: string, worker: string, job: string): void {
    this.procWorker.set(proc, worker);
    let set = this.owners.get(job);
    if (!set) this.owners.set(job, (set = new Set()));
    set.add(proc);
  }

  stopped(proc: string, job: string): void {
    this.owners.get(job)?.delete(proc);
  }

  acknowledged(proc: string, jobs: readonly string[]): void {
    this.acked.set(proc, new Set(jobs));
  }

  /** A frozen process's jobs run nothing until it resumes (failover): excused like a failure meanwhile. */
  suspended(proc: string): void {
    this.failed(proc, 'frozen');
    for (const set of this.owners.values()) set.delete(proc);
  }

  /** It resumed (and, by its own clock, did not fence): these jobs run again. */
  resumed(proc: string, jobs: readonly string[]): void {
    for (const job of jobs) this.started(proc, '', job);
  }

  failed(proc: string, _how: string): void {
    const until = this.now() + this.windows.failoverMs;
    for (const [job, set] of this.owners) if (set.has(proc)) this.excused.set(job, Math.max(this.excused.get(job) ?? 0, until));
  }

  /** An event was lost on its way to the functions (dropped, or dead-lettered): the jobs excused now wait for the resync. */
  eventLost(): void {
    const now = this.now();
    for (const [job, until] of this.excused) if (until >= now) this.awaitingResync.add(job);
  }

  /** The resync ping reached assign: what it repairs, it repairs within the failover window from now. */
  resynced(): void {
    const until = this.now() + this.windows.failoverMs;
    for (const job of this.awaitingResync) this.excused.set(job, Math.max(this.excused.get(job) ?? 0, until));
    this.awaitingResync.clear();
  }

  /** The worker ConfigMap was deleted or garbled by hand: what the workers run can no longer be read from it. */
  configLost(): void {
    const until = this.now() + this.windows.failoverMs;
    for (const job of this.jobs) this.excused.set(job, Math.max(this.excused.get(job) ?? 0, until));
  }

  pod(name: string, change: 'ready' | 'unready' | 'deleting' | 'gone', by?: string): void {
    if (change === 'deleting' && by?.startsWith('swarm')) this.outBySwarm.add(name);
    if (change === 'ready') {
      this.outBySwarm.delete(name);
      // The pool comes back from having no serving pod at all: a job nobody could run meanwhile needs a
      // look and a delivery to reach the first pod serving again, like any failover (the window from now).
      if (this.serving.size === 0) {
        const until = this.now() + this.windows.failoverMs;
        for (const job of this.jobs) if (!this.owners.get(job)?.size) this.excused.set(job, Math.max(this.excused.get(job) ?? 0, until));
      }
      this.serving.add(name);
    } else this.serving.delete(name);
  }

  /** Pods Ready and not being deleted (from the deletionTimestamp): with none, nobody can take a job over. */
  private readonly serving = new Set<string>();

  /** The pool changed: slots it no longer wants are nobody's to serve. */
  slotsLeft(wanted: (name: string) => boolean): void {
    for (const name of [...this.outBySwarm]) if (!wanted(name)) this.outBySwarm.delete(name);
  }

  /** A worker slot left the pool (no pod of that name will come back). */
  slotGone(name: string): void {
    this.outBySwarm.delete(name);
  }

  /** The truth at a read: what a status judged from that read may call covered. */
  snapshot(): Snapshot {
    const covered = new Set<string>();
    for (const job of this.jobs) {
      for (const proc of this.owners.get(job) ?? []) {
        if (!this.acknowledging || this.acked.get(proc)?.has(job)) {
          covered.add(job);
          break;
        }
      }
    }
    return { at: this.now(), covered, jobs: [...this.jobs] };
  }

  /**
   * Dedicated jobs not alone in truth: a running owner of one, whose current share names it, also runs another job
   * that share keeps on it (a job it is releasing, or no longer holds, is on its way out: a hand-off, not a sharing).
   */
  private sharedDedications(shares: ReadonlyMap<string, ShareView> | undefined): string[] {
    if (this.dedicated.size === 0 || !shares) return [];
    const out: string[] = [];
    for (const job of this.dedicated) {
      for (const proc of this.owners.get(job) ?? []) {
        const share = shares.get(this.procWorker.get(proc) ?? '');
        // A worker whose share no longer names the dedicated job, or releases it, is handing it over, not sharing it.
        const leaving = new Set(share?.releasing ?? []);
        if (!share?.jobs.includes(job) || leaving.has(job)) continue;
        const kept = share.jobs.filter((j) => j !== job && !leaving.has(j) && this.owners.get(j)?.has(proc));
        if (kept.length) out.push(`${job} shares ${this.procWorker.get(proc)} with ${kept.slice(0, 3).join(', ')}`);
      }
    }
    return out;
  }

  // --- invariants -------------------------------------------------------------------
  /** After every step. */
  step(): void {
    const now = this.now();
    for (const job of this.jobs) {
      if (this.refusal) break;
      const n = this.owners.get(job)?.size ?? 0;
      const leftover = this.leftovers.get(job);
      if (leftover && [...this.owners.get(job)!].some((proc) => !leftover.has(proc))) this.leftovers.delete(job);
      if (n > 0 && !this.leftovers.has(job)) this.established.add(job);
      if (this.handoff === 'MakeBeforeBreak') {
        if (n === 0 && this.established.has(job) && (this.excused.get(job) ?? -1) < now && !this.awaitingResync.has(job) && this.serving.size > 0) this.fail('coverage', `job ${job} has no running owner (make-before-break)`);
      } else {
        if (n <= 1) this.single.add(job);
        else if (this.single.has(job)) this.fail('two-owners', `job ${job} runs on ${[...this.owners.get(job)!].join(' and ')} (break-before-make)`);
      }
    }
    if (this.outBySwarm.size > this.maxUnavailable) this.fail('max-unavailable', `${this.outBySwarm.size} workers out of service because of Swarm (${[...this.outBySwarm].join(', ')}), maxUnavailable ${this.maxUnavailable}`);
  }

  /**
   * A status write landed; `pods`, `leases`: the truth when its pods and its Leases were read. A job it may not
   * call covered had no owner at either read. `shares`: the config its instance read or wrote last (another
   * instance's later config is that instance's to report).
   */
  status(status: Record<string, unknown>, pods: Snapshot, leases: Snapshot, shares: ReadonlyMap<string, ShareView> | undefined): void {
    const read: Snapshot = { at: Math.min(pods.at, leases.at), covered: new Set([...pods.covered, ...leases.covered]), jobs: leases.jobs };
    const uncovered = typeof status.uncoveredJobs === 'number' ? status.uncoveredJobs : undefined;
    const ready = (status.conditions as Array<{ type: string; status: string }> | undefined)?.find((c) => c.type === 'Ready')?.status === 'True';
    const now = this.now();
    // "Every dedicated job has a worker of its own" (Degraded=False), a claim about the shares this instance read or
    // wrote, while a worker runs a dedicated job and, that share says, keeps another (the truth as the status lands).
    const degraded = (status.conditions as Array<{ type: string; status: string }> | undefined)?.find((c) => c.type === 'Degraded');
    const shared = degraded?.status === 'False' ? this.sharedDedications(shares) : [];
    if (shared.length) this.fail('status', `Degraded=False (dedications honoured) written at ${now} while ${shared[0]}`);
    const missing = read.jobs.filter((j) => !read.covered.has(j) && (this.excused.get(j) ?? -1) < read.at && this.established.has(j));
    if (missing.length === 0) return;
    if (ready) this.fail('status', `Ready=True written at ${now} while ${missing.length} job(s) had no ${this.acknowledging ? 'acknowledged ' : ''}running owner when read at ${read.at} (${missing.slice(0, 3).join(', ')})`);
    else if (uncovered !== undefined && uncovered < missing.length)
      this.fail('status', `uncoveredJobs ${uncovered} written at ${now} while ${missing.length} job(s) had no ${this.acknowledging ? 'acknowledged ' : ''}running owner when read at ${read.at}`);
  }

  /**
   * The pool at the end: its workers and its spec's dedicated and shared jobs. Too few workers to give each
   * dedicated job one alone, one kept for the shared jobs, is Degraded by design (DedicationsNotHonoured,
   * docs/troubleshooting.md), and only then.
   */
  finalPool = { workers: 0, dedicated: 0, shared: 0 };

  /** Once the world has been quiet for the stated time: the Swarm converged. */
  converged(status: Record<string, unknown> | undefined, configVersion: number | undefined, generation: number | undefined): void {
    if (this.refusal) return this.convergedRefused(status, configVersion, generation);
    const problems: string[] = [];
    const pool = this.finalPool;
    const alone = pool.shared > 0 || pool.dedicated > pool.workers ? pool.workers - 1 : pool.workers;
    const unhonoured = Math.max(0, pool.dedicated - Math.max(0, alone));
    const degraded = (status?.conditions as Array<{ type: string; status: string; reason?: string }> | undefined)?.find((c) => c.type === 'Degraded');
    for (const job of this.jobs) {
      const n = this.owners.get(job)?.size ?? 0;
      if (n !== 1) problems.push(`job ${job} has ${n} running owners`);
    }
    const ready = (status?.conditions as Array<{ type: string; status: string; reason?: string }> | undefined)?.find((c) => c.type === 'Ready');
    if (unhonoured > 0) {
      if (status?.phase !== 'Degraded' || degraded?.reason !== 'DedicationsNotHonoured') problems.push(`phase ${String(status?.phase)} (${String(degraded?.reason)}) with ${unhonoured} dedicated job(s) sharing a worker`);
    } else if (status?.phase !== 'Running') problems.push(`phase ${String(status?.phase)}`);
    if (ready?.status !== 'True') problems.push(`Ready ${ready?.status ?? 'absent'} (${ready?.reason ?? ''})`);
    if (status?.uncoveredJobs !== 0) problems.push(`uncoveredJobs ${String(status?.uncoveredJobs)}`);
    if (configVersion !== undefined && status?.version !== configVersion) problems.push(`status.version ${String(status?.version)} but config version ${configVersion}`);
    if (generation !== undefined && status?.observedGeneration !== generation) problems.push(`observedGeneration ${String(status?.observedGeneration)} of ${generation}`);
    if (problems.length > 0) this.fail('convergence', problems.slice(0, 4).join('; '));
  }

  /** A refused Swarm converges to saying so (Degraded, Ready=False AcknowledgementRequired); refused from the start, it hands nothing out. */
  private convergedRefused(status: Record<string, unknown> | undefined, configVersion: number | undefined, generation: number | undefined): void {
    const problems: string[] = [];
    const ready = (status?.conditions as Array<{ type: string; status: string; reason?: string }> | undefined)?.find((c) => c.type === 'Ready');
    if (status?.phase !== 'Degraded') problems.push(`phase ${String(status?.phase)} (refused: Degraded expected)`);
    if (ready?.status !== 'False' || ready.reason !== 'AcknowledgementRequired') problems.push(`Ready ${ready?.status ?? 'absent'} (${ready?.reason ?? ''}), refused: False (AcknowledgementRequired) expected`);
    if (this.refusal?.fromStart && configVersion !== undefined) problems.push(`config version ${configVersion} written for a Swarm refused from the start`);
    if (this.refusal?.fromStart) for (const [job, set] of this.owners) if (set.size > 0) problems.push(`job ${job} runs although the Swarm was refused from the start`);
    if (generation !== undefined && status?.observedGeneration !== generation) problems.push(`observedGeneration ${String(status?.observedGeneration)} of ${generation}`);
    if (problems.length > 0) this.fail('convergence', problems.slice(0, 4).join('; '));
  }

  defect(detail: string): void {
    this.fail('defect', detail);
  }
}
