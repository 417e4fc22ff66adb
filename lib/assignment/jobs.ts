// Job normalisation: user-written JobSpecs into flat, validated columns.
// Columns (not objects) because the engine handles a million jobs per call.
import { LIMITS } from '../api/schema.js';
import { AssignmentInputError } from './errors.js';
import { hash32 } from './hash.js';
import type { Job, JobSpec } from './types.js';

export interface JobTable {
  readonly names: readonly string[];
  readonly weights: Uint16Array;
  readonly dedicated: Uint8Array;
  readonly hashes: Uint32Array;
  /** True when every weight is 1: the exact count-based path applies. */
  readonly unweighted: boolean;
  readonly dedicatedCount: number;
}

export function toJob(spec: JobSpec, position = 0): Job {
  if (typeof spec === 'string') {
    if (spec.length === 0) throw new AssignmentInputError(`job #${position + 1}: empty name`);
    return { name: spec, weight: 1, dedicated: false };
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) {
    throw new AssignmentInputError(`job #${position + 1}: expected a name or {name, weight?, dedicated?}`);
  }
  const { name, weight = 1, dedicated = false } = spec;
  if (typeof name !== 'string' || name.length === 0) {
    throw new AssignmentInputError(`job #${position + 1}: "name" must be a non-empty string`);
  }
  if (!Number.isInteger(weight) || weight < LIMITS.minWeight || weight > LIMITS.maxWeight) {
    throw new AssignmentInputError(`job "${name}": weight must be an integer from ${LIMITS.minWeight} to ${LIMITS.maxWeight}, got ${String(weight)}`);
  }
  if (typeof dedicated !== 'boolean') {
    throw new AssignmentInputError(`job "${name}": dedicated must be true or false`);
  }
  for (const key of Object.keys(spec)) {
    if (key !== 'name' && key !== 'weight' && key !== 'dedicated') {
      throw new AssignmentInputError(`job "${name}": unknown field "${key}"`);
    }
  }
  return { name, weight, dedicated };
}

export function jobTable(specs: readonly JobSpec[]): JobTable {
  const count = specs.length;
  const names = new Array<string>(count);
  const weights = new Uint16Array(count);
  const dedicated = new Uint8Array(count);
  const hashes = new Uint32Array(count);
  let unweighted = true;
  let dedicatedCount = 0;
  for (let i = 0; i < count; i++) {
    const spec = specs[i]!;
    // Bare names are the common case at scale: skip the object allocation.
    const job = typeof spec === 'string' && spec.length > 0 ? undefined : toJob(spec, i);
    const name = job ? job.name : (spec as string);
    names[i] = name;
    weights[i] = job ? job.weight : 1;
    if (job?.dedicated) {
      dedicated[i] = 1;
      dedicatedCount++;
    }
    if (weights[i] !== 1) unweighted = false;
    hashes[i] = hash32(name);
  }
  return { names, weights, dedicated, hashes, unweighted, dedicatedCount };
}

/**
 * The canonical order of the jobs: by hash, ties by name (code units). It
 * depends only on the job *set*, never on input order. Also detects duplicate
 * names, which are always adjacent in this order.
 */
export function canonicalOrder(table: JobTable): Uint32Array {
  const { names, hashes } = table;
  const count = names.length;
  const order = orderByHash(hashes);
  // Within equal-hash runs (rare), order by name and report duplicates.
  const duplicates = new Set<string>();
  let start = 0;
  while (start < count) {
    let end = start + 1;
    const h = hashes[order[start]!]!;
    while (end < count && hashes[order[end]!] === h) end++;
    if (end - start > 1) {
      const run = Array.from(order.subarray(start, end)).sort((a, b) => compareNames(names[a]!, names[b]!));
      for (let k = 0; k < run.length; k++) {
        order[start + k] = run[k]!;
        if (k > 0 && names[run[k]!] === names[run[k - 1]!]) duplicates.add(names[run[k]!]!);
      }
    }
    start = end;
  }
  if (duplicates.size > 0) {
    const listed = [...duplicates].sort(compareNames);
    const shown = listed.slice(0, 10).map((n) => JSON.stringify(n)).join(', ');
    const more = listed.length > 10 ? ` and ${listed.length - 10} more` : '';
    throw new AssignmentInputError(`duplicate job names: ${shown}${more}`);
  }
  return order;
}

/** Below this many jobs a comparison sort is cheaper than the radix sort's three passes over 2048 buckets. */
const RADIX_FROM = 512;

/**
 * Indices 0..n-1 sorted by hash (stable, so equal hashes keep index order):
 * an LSD radix sort in three 11-bit passes, linear time and allocation-light,
 * which matters at a million jobs; a comparison sort, the same order, for a few.
 */
function orderByHash(hashes: Uint32Array): Uint32Array {
  const count = hashes.length;
  if (count < RADIX_FROM) {
    const order = new Uint32Array(count);
    for (let i = 0; i < count; i++) order[i] = i;
    return order.sort((a, b) => hashes[a]! - hashes[b]! || a - b);
  }
  let from = new Uint32Array(count);
  let to = new Uint32Array(count);
  // Keys travel with their indices so every pass reads memory sequentially.
  let keysFrom = Uint32Array.from(hashes);
  let keysTo = new Uint32Array(count);
  for (let i = 0; i < count; i++) from[i] = i;
  const buckets = new Uint32Array(2048);
  for (let shift = 0; shift < 33; shift += 11) {
    buckets.fill(0);
    for (let k = 0; k < count; k++) buckets[(keysFrom[k]! >>> shift) & 2047]!++;
    let sum = 0;
    for (let b = 0; b < 2048; b++) {
      const c = buckets[b]!;
      buckets[b] = sum;
      sum += c;
    }
    for (let k = 0; k < count; k++) {
      const key = keysFrom[k]!;
      const slot = buckets[(key >>> shift) & 2047]!++;
      to[slot] = from[k]!;
      keysTo[slot] = key;
    }
    [from, to] = [to, from];
    [keysFrom, keysTo] = [keysTo, keysFrom];
  }
  return from;
}

/** Code-unit order: locale-independent, the same in every process. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
