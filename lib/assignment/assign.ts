// The assignment engine: jobs over the pods of a StatefulSet, each job on
// exactly one worker, balanced exactly, moving as few jobs as possible.
//
// Sticky scheme (like Kafka's sticky assignor): the previous assignment is an
// input. Surviving jobs stay on surviving workers; only what balance forces
// moves. Which jobs move, and where they land, is decided by the canonical
// job order (hash, then name), so the result is a function of the job set,
// weights, replicas and previous assignment — never of input order.
import { AssignmentInputError } from './errors.js';
import { hash32 } from './hash.js';
import { canonicalOrder, compareNames, jobTable, type JobTable } from './jobs.js';
import type { AssignInput, AssignResult, Assignment, UnhonouredDedication } from './types.js';
import { workerIndex, workerName } from './workers.js';

const UNPLACED = -1;

export function assign(input: AssignInput): AssignResult {
  const { statefulSetName, replicas } = input;
  const start = input.startOrdinal ?? 0;
  if (typeof statefulSetName !== 'string' || statefulSetName.length === 0) {
    throw new AssignmentInputError('statefulSetName must be a non-empty string');
  }
  if (!Number.isSafeInteger(replicas) || replicas < 0) {
    throw new AssignmentInputError(`replicas must be a non-negative integer, got ${String(replicas)}`);
  }
  if (!Number.isSafeInteger(start) || start < 0) {
    throw new AssignmentInputError(`startOrdinal must be a non-negative integer, got ${String(start)}`);
  }
  if (input.workers && (input.workers.length !== replicas || new Set(input.workers).size !== replicas)) {
    throw new AssignmentInputError(`workers must list ${replicas} distinct names, got ${input.workers.length}`);
  }
  const names = workerNaming(input.workers, statefulSetName, replicas, start);
  const table = jobTable(input.jobs);
  const order = canonicalOrder(table);
  if (replicas === 0) return { assignment: {}, unhonouredDedications: [] };

  // Workers are handled by position 0 … replicas-1 (ordinal − start) here; names only at the edges.
  const owner = keptOwners(table, names, input.previous);
  const { claimedBy, unhonoured } = dedicate(table, order, owner, replicas);
  const shared: number[] = [];
  for (let w = 0; w < replicas; w++) if (claimedBy[w] === UNPLACED) shared.push(w);
  const isShared = new Uint8Array(table.names.length);
  for (let i = 0; i < isShared.length; i++) isShared[i] = table.dedicated[i] && owner[i]! >= 0 && claimedBy[owner[i]!] === i ? 0 : 1;

  if (shared.length > 0) {
    const sharedWeights = table.unweighted || sharedAreUnit(table, isShared);
    if (sharedWeights) balanceCounts(order, owner, isShared, shared, replicas);
    else balanceWeights(table, order, owner, isShared, shared, replicas);
  }
  return { assignment: toAssignment(table, owner, names, replicas), unhonouredDedications: unhonoured };
}

/** Position ↔ name: a StatefulSet's ordinals from `start`, or the listed workers (a Deployment's pods) in order. */
interface WorkerNaming {
  name(position: number): string;
  position(name: string): number | undefined;
}

function workerNaming(workers: readonly string[] | undefined, sts: string, replicas: number, start: number): WorkerNaming {
  if (!workers) return { name: (w) => workerName(sts, start + w), position: (name) => workerIndex(sts, name, replicas, start) };
  const positions = new Map(workers.map((name, i) => [name, i] as const));
  return { name: (w) => workers[w]!, position: (name) => positions.get(name) };
}

/** Owner of each job after dropping removed workers: the previous owner if it survives, else unplaced. */
function keptOwners(table: JobTable, names: WorkerNaming, previous: Assignment | undefined): Int32Array {
  const owner = new Int32Array(table.names.length).fill(UNPLACED);
  if (!previous) return owner;
  const indexOf = nameIndex(table);
  // Lowest ordinal first, so that a job listed twice (a corrupted or foreign
  // config) deterministically stays with the lowest-ordinal holder.
  const survivors: Array<[number, readonly string[]]> = [];
  for (const [name, jobs] of Object.entries(previous)) {
    const index = names.position(name);
    if (index !== undefined) survivors.push([index, jobs]);
  }
  survivors.sort((a, b) => a[0] - b[0]);
  for (const [ordinal, jobs] of survivors) {
    for (const job of jobs) {
      const i = indexOf(job);
      if (i >= 0 && owner[i] === UNPLACED) owner[i] = ordinal;
    }
  }
  return owner;
}

/**
 * name → job index, or -1. Open addressing over the hashes already computed:
 * a Map of a million strings costs several times more.
 */
function nameIndex(table: JobTable): (name: string) => number {
  const { names, hashes } = table;
  let size = 1;
  while (size < names.length * 2) size <<= 1;
  const mask = size - 1;
  // Interleaved [hash, index] slots: a probe touches one cache line, and the
  // name itself is read only when the hash matches.
  const slots = new Int32Array(size * 2).fill(-1);
  for (let i = 0; i < names.length; i++) {
    let s = hashes[i]! & mask;
    while (slots[2 * s + 1] !== -1) s = (s + 1) & mask;
    slots[2 * s] = hashes[i]! | 0;
    slots[2 * s + 1] = i;
  }
  return (name) => {
    const h = hash32(name) | 0;
    for (let s = h & mask; ; s = (s + 1) & mask) {
      const i = slots[2 * s + 1]!;
      if (i === -1) return -1;
      if (slots[2 * s] === h && names[i] === name) return i;
    }
  };
}

/**
 * Give dedicated jobs a worker of their own. Keeps at least one worker for the
 * shared jobs. Sticky: a dedicated job alone on a surviving worker keeps it.
 * New dedications take the least-loaded free workers, lowest ordinal first
 * (low ordinals survive scale-down). Unhonoured ones become shared jobs.
 */
function dedicate(
  table: JobTable,
  order: Uint32Array,
  owner: Int32Array,
  replicas: number,
): { claimedBy: Int32Array; unhonoured: UnhonouredDedication[] } {
  const claimedBy = new Int32Array(replicas).fill(UNPLACED);
  const unhonoured: UnhonouredDedication[] = [];
  const dedicatedCount = table.dedicatedCount;
  if (dedicatedCount === 0) return { claimedBy, unhonoured };
  const sharedCount = table.names.length - dedicatedCount;
  // Unhonoured dedicated jobs become shared, so they too need a shared worker.
  const capacity = sharedCount > 0 || dedicatedCount > replicas ? replicas - 1 : replicas;
  const candidates: number[] = [];
  for (const i of order) if (table.dedicated[i]) candidates.push(i);

  const load = new Float64Array(replicas);
  for (let i = 0; i < owner.length; i++) if (owner[i]! >= 0) load[owner[i]!] = load[owner[i]!]! + table.weights[i]!;
  const heldCount = new Uint32Array(replicas);
  for (let i = 0; i < owner.length; i++) if (owner[i]! >= 0) heldCount[owner[i]!] = heldCount[owner[i]!]! + 1;

  let honoured = 0;
  const isHonoured = new Uint8Array(table.names.length);
  for (const i of candidates) {
    const w = owner[i]!;
    if (honoured < capacity && w >= 0 && heldCount[w] === 1 && claimedBy[w] === UNPLACED) {
      claimedBy[w] = i;
      isHonoured[i] = 1;
      honoured++;
    }
  }
  if (honoured < capacity) {
    const free: number[] = [];
    for (let w = 0; w < replicas; w++) if (claimedBy[w] === UNPLACED) free.push(w);
    free.sort((a, b) => load[a]! - load[b]! || a - b);
    let next = 0;
    for (const i of candidates) {
      if (honoured >= capacity) break;
      if (isHonoured[i]) continue;
      const w = free[next++]!;
      claimedBy[w] = i;
      isHonoured[i] = 1;
      honoured++;
    }
  }
  for (let w = 0; w < replicas; w++) {
    const i = claimedBy[w]!;
    if (i !== UNPLACED) owner[i] = w;
  }
  // Evict everything else from claimed workers.
  for (let i = 0; i < owner.length; i++) {
    const w = owner[i]!;
    if (w >= 0 && claimedBy[w] !== UNPLACED && claimedBy[w] !== i) owner[i] = UNPLACED;
  }
  const reason =
    `${replicas} replica(s) cannot give ${dedicatedCount} dedicated job(s) a worker each` +
    (capacity < replicas ? ' and keep one worker for the shared jobs' : '') +
    `; ${honoured} honoured, this one shares a worker`;
  const left = candidates.filter((i) => !isHonoured[i]).map((i) => table.names[i]!);
  left.sort(compareNames);
  for (const job of left) unhonoured.push({ job, reason });
  return { claimedBy, unhonoured };
}

function sharedAreUnit(table: JobTable, isShared: Uint8Array): boolean {
  for (let i = 0; i < isShared.length; i++) if (isShared[i] && table.weights[i] !== 1) return false;
  return true;
}

/**
 * Unweighted: exact targets floor(S/m) or ceil, the S mod m ceil slots going to
 * the workers holding the most (ties: lowest ordinal) — this choice makes the
 * number of moved jobs equal the lower bound. Over-target workers shed their
 * last jobs in canonical order; unplaced jobs fill under-target workers in
 * canonical order, lowest ordinal first.
 */
function balanceCounts(order: Uint32Array, owner: Int32Array, isShared: Uint8Array, shared: number[], replicas: number): void {
  const held = new Int32Array(replicas);
  let total = 0;
  for (let i = 0; i < owner.length; i++) {
    if (!isShared[i]) continue;
    total++;
    if (owner[i]! >= 0) held[owner[i]!] = held[owner[i]!]! + 1;
  }
  const m = shared.length;
  const floor = Math.floor(total / m);
  const ceilSlots = total % m;
  const byHeld = [...shared].sort((a, b) => held[b]! - held[a]! || a - b);
  const target = new Int32Array(replicas);
  byHeld.forEach((w, k) => (target[w] = floor + (k < ceilSlots ? 1 : 0)));

  const excess = new Int32Array(replicas);
  let toShed = 0;
  for (const w of shared) {
    excess[w] = Math.max(0, held[w]! - target[w]!);
    toShed += excess[w]!;
  }
  for (let k = order.length - 1; k >= 0 && toShed > 0; k--) {
    const i = order[k]!;
    const w = owner[i]!;
    if (w >= 0 && isShared[i] && excess[w]! > 0) {
      owner[i] = UNPLACED;
      excess[w]!--;
      held[w]!--;
      toShed--;
    }
  }
  let cursor = 0;
  for (let k = 0; k < order.length; k++) {
    const i = order[k]!;
    if (owner[i] !== UNPLACED || !isShared[i]) continue;
    while (held[shared[cursor]!]! >= target[shared[cursor]!]!) cursor++;
    const w = shared[cursor]!;
    owner[i] = w;
    held[w]!++;
  }
}

/**
 * Weighted: no exact count targets exist, so keep loads within the largest
 * weight of each other. Workers above avg + wmax shed their heaviest jobs,
 * then the heaviest workers shed (heaviest job first) just enough weight to
 * fill the light ones; unplaced jobs go heaviest-first to the least-loaded worker
 * (LPT); a final repair moves jobs from the most to the least loaded worker
 * until max - min <= wmax (each such move strictly lowers the sum of squared
 * loads, so it terminates).
 */
function balanceWeights(
  table: JobTable,
  order: Uint32Array,
  owner: Int32Array,
  isShared: Uint8Array,
  shared: number[],
  replicas: number,
): void {
  const { weights } = table;
  const rank = new Uint32Array(order.length);
  order.forEach((i, k) => (rank[i] = k));
  const load = new Float64Array(replicas);
  let totalWeight = 0;
  let maxWeight = 0;
  const members: number[] = [];
  for (let i = 0; i < owner.length; i++) {
    if (!isShared[i]) continue;
    members.push(i);
    totalWeight += weights[i]!;
    maxWeight = Math.max(maxWeight, weights[i]!);
    if (owner[i]! >= 0) load[owner[i]!] = load[owner[i]!]! + weights[i]!;
  }
  const heavyFirst = members.sort((a, b) => weights[b]! - weights[a]! || rank[b]! - rank[a]!);
  const avg = totalWeight / shared.length;
  // 1. What balance forces: nobody stays above avg + wmax (the bound's premise).
  let supply = 0;
  for (const i of heavyFirst) {
    const w = owner[i]!;
    if (w >= 0 && load[w]! > avg + maxWeight) {
      owner[i] = UNPLACED;
      load[w] = load[w]! - weights[i]!;
    }
    if (owner[i] === UNPLACED) supply += weights[i]!;
  }
  // 2. Just enough to lift the light workers to the fill line: the lowest
  // load compatible with max - min <= wmax given the heaviest worker now.
  // Shed from the currently heaviest worker, its heaviest job that keeps it on
  // or above the line first (fewest moves), until the weight to place covers
  // the deficit. Shedding more would only send jobs on a round trip. The line
  // is recomputed as the heaviest worker sheds (O(n) per shed: weighted sets
  // are small; the million-job path is the unweighted one).
  const fillState = (): { line: number; deficit: number } => {
    let maxLoad = 0;
    for (const w of shared) maxLoad = Math.max(maxLoad, load[w]!);
    const line = Math.min(avg, maxLoad - maxWeight);
    let deficit = 0;
    for (const w of shared) deficit += Math.max(0, line - load[w]!);
    return { line, deficit };
  };
  let fill = fillState();
  if (supply < fill.deficit) {
    const heaviestFirst = new Map<number, number[]>(shared.map((w) => [w, []]));
    for (const i of heavyFirst) if (owner[i]! >= 0) heaviestFirst.get(owner[i]!)!.push(i);
    const next = new Map<number, number>(shared.map((w) => [w, 0]));
    // A worker's next candidate: its heaviest job that keeps it on the line.
    const fits = (w: number): number => {
      const list = heaviestFirst.get(w)!;
      let k = next.get(w)!;
      while (k < list.length && (owner[list[k]!] !== w || load[w]! - weights[list[k]!]! < fill.line)) k++;
      next.set(w, k);
      return k < list.length ? list[k]! : -1;
    };
    while (supply < fill.deficit) {
      let top = -1;
      let job = -1;
      for (const w of shared) {
        if (top >= 0 && load[w]! <= load[top]!) continue;
        const i = fits(w);
        if (i >= 0) [top, job] = [w, i];
      }
      if (top < 0 || load[top]! <= avg) break;
      owner[job] = UNPLACED;
      load[top] = load[top]! - weights[job]!;
      supply += weights[job]!;
      fill = fillState();
    }
  }
  const heap = new LoadHeap(shared, load);
  // heavyFirst ties broken by descending rank; placement wants ascending rank.
  const toPlace = heavyFirst.filter((i) => owner[i] === UNPLACED).sort((a, b) => weights[b]! - weights[a]! || rank[a]! - rank[b]!);
  for (const i of toPlace) {
    const w = heap.popMin();
    owner[i] = w;
    load[w] = load[w]! + weights[i]!;
    heap.push(w);
  }
  repairSpread(weights, rank, owner, isShared, shared, load, maxWeight);
}

function repairSpread(
  weights: Uint16Array,
  rank: Uint32Array,
  owner: Int32Array,
  isShared: Uint8Array,
  shared: number[],
  load: Float64Array,
  maxWeight: number,
): void {
  const extremes = (): [number, number] => {
    let hi = shared[0]!;
    let lo = shared[0]!;
    for (const w of shared) {
      if (load[w]! > load[hi]!) hi = w;
      if (load[w]! < load[lo]!) lo = w;
    }
    return [hi, lo];
  };
  let [hi, lo] = extremes();
  if (load[hi]! - load[lo]! <= maxWeight) return;
  const jobsOf = new Map<number, number[]>();
  for (const w of shared) jobsOf.set(w, []);
  for (let i = 0; i < owner.length; i++) if (isShared[i] && owner[i]! >= 0) jobsOf.get(owner[i]!)!.push(i);
  while (load[hi]! - load[lo]! > maxWeight) {
    // The job whose weight is closest to half the gap evens the pair best.
    const half = (load[hi]! - load[lo]!) / 2;
    const list = jobsOf.get(hi)!;
    let best = -1;
    for (let k = 0; k < list.length; k++) {
      const i = list[k]!;
      const b = best < 0 ? -1 : list[best]!;
      const d = Math.abs(weights[i]! - half);
      if (best < 0 || d < Math.abs(weights[b]! - half) || (d === Math.abs(weights[b]! - half) && rank[i]! > rank[b]!)) best = k;
    }
    const i = list[best]!;
    list.splice(best, 1);
    jobsOf.get(lo)!.push(i);
    owner[i] = lo;
    load[hi] = load[hi]! - weights[i]!;
    load[lo] = load[lo]! + weights[i]!;
    [hi, lo] = extremes();
  }
}

/** Binary min-heap of workers keyed by (load, ordinal). */
class LoadHeap {
  private readonly items: number[] = [];
  constructor(
    workers: readonly number[],
    private readonly load: Float64Array,
  ) {
    for (const w of workers) this.push(w);
  }
  private less(a: number, b: number): boolean {
    return this.load[a]! < this.load[b]! || (this.load[a] === this.load[b] && a < b);
  }
  push(w: number): void {
    const items = this.items;
    items.push(w);
    let k = items.length - 1;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!this.less(items[k]!, items[parent]!)) break;
      [items[k], items[parent]] = [items[parent]!, items[k]!];
      k = parent;
    }
  }
  popMin(): number {
    const items = this.items;
    const top = items[0]!;
    const last = items.pop()!;
    if (items.length > 0) {
      items[0] = last;
      let k = 0;
      for (;;) {
        const l = 2 * k + 1;
        const r = l + 1;
        let m = k;
        if (l < items.length && this.less(items[l]!, items[m]!)) m = l;
        if (r < items.length && this.less(items[r]!, items[m]!)) m = r;
        if (m === k) break;
        [items[k], items[m]] = [items[m]!, items[k]!];
        k = m;
      }
    }
    return top;
  }
}

function toAssignment(table: JobTable, owner: Int32Array, names: WorkerNaming, replicas: number): Assignment {
  const lists: string[][] = Array.from({ length: replicas }, () => []);
  for (let i = 0; i < owner.length; i++) lists[owner[i]!]!.push(table.names[i]!);
  const assignment: Record<string, readonly string[]> = {};
  // The default sort compares UTF-16 code units, exactly compareNames, and is
  // several times faster than a comparator callback.
  for (let w = 0; w < replicas; w++) assignment[names.name(w)] = lists[w]!.sort();
  return assignment;
}
