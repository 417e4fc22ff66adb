// Round-robin over the jobs sorted by name: job k (in code-unit order) goes
// to worker k mod n. Perfectly balanced and stateless; any insertion shifts
// every later job.
import type { Algorithm, JobSet } from './types.js';

export const roundRobin: Algorithm = {
  name: 'round-robin (sorted)',
  layout(jobs: JobSet, replicas: number): Int32Array {
    const order = jobs.names.map((_, i) => i);
    const names = jobs.names;
    order.sort((a, b) => (names[a]! < names[b]! ? -1 : names[a]! > names[b]! ? 1 : 0));
    const owner = new Int32Array(names.length);
    order.forEach((i, k) => (owner[i] = k % replicas));
    return owner;
  },
};
