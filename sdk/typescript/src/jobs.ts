// The application's callbacks, run with deadlines (docs/worker-protocol.md §6):
// each start and stop is timed; one that has not returned by its deadline is
// overrun, and an overrun callback makes the worker unhealthy until it returns
// (the default health check: it detects a callback that never returns). Jobs
// whose start returned are `running`: only they are ever acknowledged.

/** What a callback learns besides the job's name. */
export interface JobContext {
  /** The share version that starts the job (a start), or that had been running it (a stop). */
  readonly shareVersion: number;
  /** The top-level config version being applied. */
  readonly configVersion: number | undefined;
  /**
   * With failover: true while this worker's ownership of its jobs is certain
   * by its own clock (heartbeat fresh, not fenced). A job that acts on the
   * world checks it before each act: a process resumed after a pause learns
   * here, before its timers do, that its jobs may have moved (W29).
   */
  readonly mayAct: () => boolean;
}

export interface Callbacks {
  start(job: string, context: JobContext): void | Promise<void>;
  stop(job: string, context: JobContext): void | Promise<void>;
  /** The application's health check of its running jobs; false (or a throw) makes the worker unhealthy. */
  health?(jobs: readonly string[]): boolean | Promise<boolean>;
}

export interface Deadlines {
  startMs: number;
  stopMs: number;
}

interface InFlight {
  readonly kind: 'start' | 'stop';
  readonly job: string;
  readonly deadline: number;
}

export type StartOutcome = 'running' | 'failed';

export class JobRunner {
  /** Jobs whose start returned and that have not been stopped. */
  readonly running = new Set<string>();
  private readonly inFlight = new Set<InFlight>();
  /** Stops in flight: a second stop of the job waits for the first instead of calling again. */
  private readonly stopping = new Map<string, Promise<void>>();

  constructor(
    private readonly callbacks: Callbacks,
    private readonly deadlines: Deadlines,
    private readonly onError: (kind: 'start' | 'stop' | 'health', job: string | undefined, error: unknown) => void = () => undefined,
    private readonly now: () => number = Date.now,
  ) {}

  private async timed(kind: 'start' | 'stop', job: string, call: () => void | Promise<void>): Promise<void> {
    const entry: InFlight = { kind, job, deadline: this.now() + (kind === 'start' ? this.deadlines.startMs : this.deadlines.stopMs) };
    this.inFlight.add(entry);
    try {
      await call();
    } finally {
      this.inFlight.delete(entry);
    }
  }

  /** Starts `job`: running once start returned; failed (not running) when it threw. */
  async start(job: string, context: JobContext): Promise<StartOutcome> {
    try {
      await this.timed('start', job, () => this.callbacks.start(job, context));
      this.running.add(job);
      return 'running';
    } catch (error) {
      this.onError('start', job, error);
      return 'failed';
    }
  }

  /** Stops `job` and waits for its stop to return, however long (an overrun keeps it counted as running). A throw still ends it. */
  stop(job: string, context: JobContext): Promise<void> {
    const already = this.stopping.get(job);
    if (already) return already;
    const stopping = (async () => {
      try {
        await this.timed('stop', job, () => this.callbacks.stop(job, context));
      } catch (error) {
        this.onError('stop', job, error);
      }
      this.running.delete(job);
      this.stopping.delete(job);
    })();
    this.stopping.set(job, stopping);
    return stopping;
  }

  /** Callbacks past their deadline now. */
  overrun(): { kind: 'start' | 'stop'; job: string }[] {
    const now = this.now();
    return [...this.inFlight].filter((c) => c.deadline <= now).map(({ kind, job }) => ({ kind, job }));
  }

  /** Healthy: nothing overrun, and the application's check (if any) passes. */
  async healthy(): Promise<boolean> {
    if (this.overrun().length > 0) return false;
    if (!this.callbacks.health) return true;
    try {
      return (await this.callbacks.health([...this.running].sort())) !== false;
    } catch (error) {
      this.onError('health', undefined, error);
      return false;
    }
  }
}
