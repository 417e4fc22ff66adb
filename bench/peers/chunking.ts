// The original operator's contiguous chunking, reproduced with its defect:
// marcosQuesada/k8s-lab, services/swarm-pool-controller/internal/app/state.go,
// BalanceWorkload. Worker i gets size_i = ⌊J/n⌋ (+1 for i < J mod n) jobs, but
// its slice starts at i·size_i rather than at the sum of earlier sizes, so
// slices overlap (a job on two workers) and the tail is never assigned.
// A job on two workers is reported at the first; dropped jobs get owner -1.
import type { Algorithm, JobSet } from './types.js';

export const chunking: Algorithm = {
  name: 'original chunking',
  layout(jobs: JobSet, replicas: number): Int32Array {
    return chunkingCoverage(jobs.names.length, replicas).owner;
  },
};

/** Owner per job (first holder, -1 if none) and how many workers hold each job. */
export function chunkingCoverage(jobCount: number, replicas: number): { owner: Int32Array; holders: Uint16Array } {
  const owner = new Int32Array(jobCount).fill(-1);
  const holders = new Uint16Array(jobCount);
  const partSize = Math.floor(jobCount / replicas);
  const remainder = jobCount % replicas;
  for (let i = 0; i < replicas; i++) {
    const size = partSize + (i < remainder ? 1 : 0);
    const start = i * size;
    const end = Math.min((i + 1) * size, jobCount);
    for (let k = start; k < end; k++) {
      if (owner[k] === -1) owner[k] = i;
      holders[k]!++;
    }
  }
  return { owner, holders };
}
