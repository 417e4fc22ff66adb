// Rendezvous (highest random weight) hashing: D. G. Thaler and C. V.
// Ravishankar, "Using Name-Based Mappings to Increase Hit Rates", IEEE/ACM
// ToN 6(1), 1998. Each job goes to the worker with the highest hash of
// (job, worker); ties to the lower ordinal. O(J·n).
import { mixPair } from './mix.js';
import type { Algorithm, JobSet } from './types.js';

export const rendezvous: Algorithm = {
  name: 'rendezvous',
  layout(jobs: JobSet, replicas: number): Int32Array {
    const owner = new Int32Array(jobs.names.length);
    for (let i = 0; i < owner.length; i++) {
      const h = jobs.hashA[i]!;
      let best = 0;
      let bestScore = -1;
      for (let w = 0; w < replicas; w++) {
        const score = mixPair(h, w);
        if (score > bestScore) {
          bestScore = score;
          best = w;
        }
      }
      owner[i] = best;
    }
    return owner;
  },
};
