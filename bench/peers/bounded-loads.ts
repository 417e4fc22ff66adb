// Consistent hashing with bounded loads: V. Mirrokni, M. Thorup and M.
// Zadimoghaddam, "Consistent Hashing with Bounded Loads", SODA 2018
// (arXiv:1608.01350, 2016), the scheme behind Argo CD's
// "consistent-hashing" cluster sharding. Workers sit on a ring at VNODES
// points each; jobs, taken in ring (hash) order, go clockwise to the first
// worker whose load is below the cap ⌈(1 + ε)·J/n⌉, ε = 0.25.
import { fmix32 } from './mix.js';
import type { Algorithm, JobSet } from './types.js';

const EPSILON = 0.25;
const VNODES = 100;

export const boundedLoads: Algorithm = {
  name: 'CH bounded loads (ε=0.25)',
  layout(jobs: JobSet, replicas: number): Int32Array {
    const points = replicas * VNODES;
    const keys = new Float64Array(points);
    for (let w = 0; w < replicas; w++) {
      for (let v = 0; v < VNODES; v++) {
        // (point hash, worker) packed so one numeric sort orders the ring.
        keys[w * VNODES + v] = fmix32(Math.imul(w + 1, 0x9e3779b9) ^ fmix32(v + 0x632be5ab)) * 4096 + w;
      }
    }
    keys.sort();
    const ringHash = new Float64Array(points);
    const ringWorker = new Int32Array(points);
    for (let p = 0; p < points; p++) {
      ringHash[p] = Math.floor(keys[p]! / 4096);
      ringWorker[p] = keys[p]! % 4096;
    }
    const count = jobs.names.length;
    const cap = Math.ceil(((1 + EPSILON) * count) / replicas);
    const load = new Int32Array(replicas);
    const owner = new Int32Array(count);
    // Arrival order matters for bounded loads; jobs arrive in hash order, ties by index.
    const order = new Float64Array(count);
    for (let i = 0; i < count; i++) order[i] = jobs.hashA[i]! * 2 ** 21 + i;
    order.sort();
    for (let k = 0; k < count; k++) {
      const i = order[k]! % 2 ** 21;
      const h = jobs.hashA[i]!;
      let lo = 0;
      let hi = points;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (ringHash[mid]! < h) lo = mid + 1;
        else hi = mid;
      }
      let p = lo % points;
      while (load[ringWorker[p]!]! >= cap) p = (p + 1) % points;
      owner[i] = ringWorker[p]!;
      load[owner[i]!]!++;
    }
    return owner;
  },
};
