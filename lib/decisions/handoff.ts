// A handoff staged through the ConfigMap itself, for workers that reload their
// share without a restart (restart policy None): what to publish now, given who
// owns what (the assigner's answer), the config in force and what each worker's
// own pod acknowledges of it. Pure; level-triggered: every reconcile recomputes
// the stage from observations, so a newer version never drops an earlier wait.
//
// Make-before-break: a job moving from L to G is published for both, marked
// `releasing` on L; L's copy is removed only once G serves and acknowledges a share that
// contains it (all of L's releasing jobs at once, so L reloads once), and is
// then listed as `released` on L until L acknowledges its smaller share.
// Break-before-make: the job leaves L at once and waits on G as `awaiting`; it
// is added to G only once every other live worker acknowledges the config in
// force (so none of them still runs it); so does a job new to the config (one
// put back under its own name may still run on a worker that has not reloaded).
import type { Handoff } from '../api/types.js';
import type { Assignment, UnhonouredDedication } from '../assignment/types.js';
import type { HandoffMarks, WorkerConfig } from '../workerconfig/index.js';
import type { WorkerFacts } from './restarts.js';
import { isExpired, isServing, isStuck } from './workers.js';

export interface HandoffInput {
  handoff: Handoff;
  /** The config in force; undefined for a first assignment (nothing runs, nothing to hand over). */
  previous: WorkerConfig | undefined;
  /** Who owns what now. */
  target: Assignment;
  /** Each worker's pod and what it acknowledges, judged against `previous`. */
  facts: (worker: string) => WorkerFacts;
}

export interface StagedHandoff {
  /** What each worker runs now (published as `jobs`). */
  jobs: Assignment;
  marks: HandoffMarks;
}

/**
 * Caught up with the config in force: its pod acknowledges its share. A pod
 * that does not acknowledge is taken as caught up once it serves (inferred,
 * and status says so); a worker without a pod runs nothing.
 */
function caughtUp(facts: WorkerFacts): boolean {
  if (!facts.pod) return true;
  if (facts.restartPending) return false;
  if (facts.ack !== undefined) return facts.ack === 'runs';
  return isServing(facts.pod);
}

/** Who owns what while workers out of service are in custody, and whether every replaced one has a custodian. */
export interface Custody {
  target: Assignment;
  /** Every worker being replaced has a serving peer to hand its jobs to (the pool's HANDOVER_ANNOTATION). */
  handover: boolean;
}

/**
 * Make-before-break for a worker whose pod is out of service but still there:
 * - replaced under its own name (a StatefulSet pod deleted, evicted or rolled:
 *   `replacesUnderOwnName`; a Deployment's successor takes its predecessor's
 *   share instead), its pod terminating;
 * - stuck (workers.ts isStuck): its container crash-looping (the kubelet waits
 *   10 s doubling to 5 min before the next start), unable to start (an image
 *   that cannot be pulled), or no node takes it; nothing runs its jobs
 *   meanwhile. A single crash restarted at once is not waited out this way;
 * - expired (workers.ts isExpired): a worker that heartbeats whose running pod
 *   turned NotReady (docs/failure-detection.md). Under break-before-make
 *   (`breaksFirst`) only these move: such a worker fenced itself, so it
 *   counts as stopped; with no serving peer the assignment stands and the
 *   staging withholds its jobs (breakBeforeMake: they await it), so its share
 *   empties and the worker, fenced until it reads an empty one, can come back.
 * The jobs the target gives it go to serving peers (to the one already
 * publishing a job, else the least loaded), staged like any move: a stopping
 * pod waits for its share to empty (HANDOVER_ANNOTATION). Once the pod is gone,
 * or runs again, the assigner gives its worker its share back, handed over the
 * same way. No serving peer in the assignment: a serving departing pod (`departing`)
 * is the custodian of last resort, staged the same way. None either: nothing to
 * hand to, the assignment stands, and `handover` is false if a replaced pod is among
 * them (it then stops at once) unless a peer's pod is starting (it waits for it) or
 * its jobs are already published to a serving pod outside the assignment.
 */
export function inCustody(
  target: Assignment,
  previous: WorkerConfig | undefined,
  facts: (worker: string) => WorkerFacts,
  pool: {
    replacesUnderOwnName: boolean;
    breaksFirst?: boolean;
    /** Workers of the pool's pods outside the assignment (departing), which may take custody as a last resort: hot-reloading ones only. */
    departing?: readonly string[];
  },
  /** Jobs that ask for a worker of their own: their workers take no custody while another serves. */
  dedicated: ReadonlySet<string> = new Set(),
): Custody {
  const workers = Object.keys(target);
  const replaced = (w: string) => pool.replacesUnderOwnName && !!facts(w).pod?.terminating;
  const out = (w: string) => isExpired(facts(w)) || (!pool.breaksFirst && (replaced(w) || isStuck(facts(w).pod)));
  const away = workers.filter((w) => out(w) && target[w]!.length > 0);
  if (away.length === 0) return { target, handover: true };
  // Not one that is out though Ready (fenced, its pod not NotReady yet): it would be given its own jobs.
  const serving = workers.filter((w) => isServing(facts(w).pod) && !out(w));
  // Breaking first with nobody to take them: the jobs stay the expired worker's, awaiting it (breakBeforeMake), not
  // nobody's: a job on its way to it from a holder that may still run it must go on waiting for that holder (seed 4918).
  if (serving.length === 0 && pool.breaksFirst) return { target, handover: true };
  // No worker of the assignment serves, but a departing pod (past the replicas, kept by OrderedReady while a
  // predecessor is unhealthy) still does: it runs the jobs until a worker of the assignment serves again.
  const lastResort = serving.length === 0 && !pool.breaksFirst ? (pool.departing ?? []).filter((w) => !(w in target) && isServing(facts(w).pod)) : [];
  // A peer whose pod is starting will serve soon and take custody then: a replaced pod keeps running its jobs
  // meanwhile (its grace period bounds the wait) rather than stop with nobody to run them (seed 5960).
  const starting = workers.some((w) => !out(w) && !!facts(w).pod && !facts(w).pod!.terminating && !isStuck(facts(w).pod));
  if (serving.length === 0 && lastResort.length === 0) return { target, handover: starting || away.filter(replaced).every((w) => runElsewhere(target[w]!, w, previous, facts)) };
  // A worker running a dedicated job alone keeps it alone: custody goes to the others while any serves.
  const shared = serving.filter((w) => !target[w]!.some((job) => dedicated.has(job)));
  const custodians = lastResort.length > 0 ? lastResort : shared.length > 0 ? shared : serving;
  const holder = new Map<string, string>();
  for (const w of custodians) for (const job of previous?.workloads[w]?.jobs ?? []) holder.set(job, w);
  const next: Record<string, string[]> = Object.fromEntries([...workers.map((w) => [w, [...target[w]!]]), ...lastResort.map((w) => [w, []])]);
  const leastLoaded = () => custodians.reduce((a, b) => (next[b]!.length < next[a]!.length ? b : a));
  for (const w of away) {
    for (const job of target[w]!) next[holder.get(job) ?? leastLoaded()]!.push(job);
    next[w] = [];
  }
  return { target: next, handover: true };
}

/** Dedicated jobs that custody put on a worker beside other jobs (the assigner's own unhonoured ones aside). */
export function sharedInCustody(target: Assignment, dedicated: ReadonlySet<string>, known: readonly UnhonouredDedication[]): UnhonouredDedication[] {
  if (dedicated.size === 0) return [];
  const already = new Set(known.map((u) => u.job));
  return Object.values(target).flatMap((jobs) =>
    jobs.length > 1 ? jobs.filter((job) => dedicated.has(job) && !already.has(job)).map((job) => ({ job, reason: 'its worker is out of service: a peer runs it beside its own jobs meanwhile' })) : [],
  );
}

/**
 * Every job of `jobs` is published, in the config in force, to another worker whose pod serves: one outside
 * the assignment (a departing pod past the replicas that took custody earlier) runs them while the replaced
 * pod waits, so it must not stop first.
 */
function runElsewhere(jobs: readonly string[], worker: string, previous: WorkerConfig | undefined, facts: (worker: string) => WorkerFacts): boolean {
  const published = new Set<string>();
  for (const [w, share] of Object.entries(previous?.workloads ?? {})) if (w !== worker && isServing(facts(w).pod)) for (const job of share.jobs) published.add(job);
  return jobs.every((job) => published.has(job));
}

export function stageHandoff(input: HandoffInput): StagedHandoff {
  const { previous, target } = input;
  if (!previous) return { jobs: target, marks: {} };
  return input.handoff === 'MakeBeforeBreak' ? makeBeforeBreak(input, previous) : breakBeforeMake(input, previous);
}

/** Each worker's published jobs as a set, built once per worker asked about (shares hold thousands of jobs). */
function publishedSets(previous: WorkerConfig): (worker: string) => ReadonlySet<string> {
  const sets = new Map<string, Set<string>>();
  return (worker) => {
    let set = sets.get(worker);
    if (!set) sets.set(worker, (set = new Set(previous.workloads[worker]?.jobs ?? [])));
    return set;
  };
}

function makeBeforeBreak({ target, facts }: HandoffInput, previous: WorkerConfig): StagedHandoff {
  const owner = new Map<string, string>();
  for (const [worker, jobs] of Object.entries(target)) for (const job of jobs) owner.set(job, worker);
  const published = (w: string): readonly string[] => previous.workloads[w]?.jobs ?? [];
  const publishedTo = publishedSets(previous);
  // The new owner runs the job: it was published to it, its pod serves (Ready: what status
  // counts as covered, so the loser never stops first) and acknowledges that share.
  // A gainer with no pod runs nothing yet (the StatefulSet grows only after the config is
  // written, so the events right after the write see none): its loser keeps the job.
  const received = (job: string, to: string): boolean => {
    const gainer = facts(to);
    return isServing(gainer.pod) && publishedTo(to).has(job) && caughtUp(gainer);
  };

  const jobs: Record<string, string[]> = {};
  const marks: Record<string, { releasing?: string[]; released?: string[] }> = {};
  const workers = new Set([...Object.keys(target), ...Object.keys(previous.workloads)]);
  for (const worker of workers) {
    const owns = target[worker] ?? [];
    const mine = new Set(owns);
    // Jobs this worker's pod may still run that now belong to another worker
    // (a job gone from the spec has no new owner and simply stops).
    const leaving = facts(worker).pod ? published(worker).filter((j) => !mine.has(j) && owner.has(j)) : [];
    const releasing = leaving.every((j) => received(j, owner.get(j)!)) ? [] : leaving;
    // Released now, or earlier and not yet reloaded: the pod may still run them.
    const before = previous.workloads[worker];
    const stillRunning = facts(worker).pod && !caughtUp(facts(worker)) ? (before?.released ?? []) : [];
    const justReleased = releasing.length === 0 ? leaving : [];
    const released = [...new Set([...justReleased, ...stillRunning])].filter((j) => !mine.has(j));
    if (worker in target || releasing.length > 0) jobs[worker] = [...owns, ...releasing];
    if (releasing.length > 0 || released.length > 0) {
      marks[worker] = { ...(releasing.length ? { releasing } : {}), ...(released.length && worker in target ? { released } : {}) };
    }
  }
  return { jobs, marks };
}

function breakBeforeMake({ target, facts }: HandoffInput, previous: WorkerConfig): StagedHandoff {
  // Who has each job published (and a live pod that may run it). An expired
  // worker fenced itself before its pod turned NotReady: it runs nothing.
  const holders = new Map<string, string[]>();
  const fenced = (worker: string) => isExpired(facts(worker));
  for (const [worker, share] of Object.entries(previous.workloads)) {
    if (!facts(worker).pod || fenced(worker)) continue;
    for (const job of share.jobs) holders.set(job, [...(holders.get(job) ?? []), worker]);
  }
  // A departing worker whose pod cannot acknowledge (a restart-only one) runs what it read at its start,
  // whatever its share says now, until that pod is gone: nobody may gain a job while it lives.
  const departingBlind = (w: string) => !(w in target) && facts(w).pod !== undefined && facts(w).ack === undefined;
  const behind = new Set(Object.keys(previous.workloads).filter((w) => (!caughtUp(facts(w)) || departingBlind(w)) && !fenced(w)));
  // A job the config in force publishes to nobody (awaiting its gainer, new, put back under its own name
  // after its removal, or given before the config was lost) may still run on a worker behind on its share:
  // it waits until every other worker has caught up. One published to a worker with no pod moves at once.
  const published = new Set(Object.values(previous.workloads).flatMap((share) => share.jobs));
  const jobs: Record<string, string[]> = {};
  const marks: Record<string, { awaiting: string[] }> = {};
  for (const [worker, owns] of Object.entries(target)) {
    // Nobody else may still run the job: no other worker has it published, and
    // every other worker acknowledges the config in force.
    const othersStopped = [...behind].every((w) => w === worker);
    const heldElsewhere = (job: string) => (holders.get(job) ?? []).some((w) => w !== worker);
    const mine = new Set(previous.workloads[worker]?.jobs ?? []);
    // A job published to this worker and to another (a make-before-break hand-off in flight when the
    // handoff switched) waits like any other: never two owners from here on.
    // An expired worker runs nothing (it fenced itself) and must read a share of none to come back: every job it
    // owns awaits it, so the job is remembered as on its way rather than dropped to nobody.
    const awaiting = fenced(worker) ? [...owns] : owns.filter((j) => heldElsewhere(j) || (!mine.has(j) && !published.has(j) && !othersStopped));
    const waiting = new Set(awaiting);
    jobs[worker] = owns.filter((j) => !waiting.has(j));
    if (awaiting.length > 0) marks[worker] = { awaiting };
  }
  // A departing worker (no share now) whose pod still lives and has not acknowledged
  // giving up its jobs stays listed, with none: it stays a holder, so nobody gains them yet.
  for (const worker of Object.keys(previous.workloads)) {
    const held = (previous.workloads[worker]?.jobs.length ?? 0) > 0;
    if (!(worker in target) && facts(worker).pod && (held || behind.has(worker))) jobs[worker] = [];
  }
  return { jobs, marks };
}
