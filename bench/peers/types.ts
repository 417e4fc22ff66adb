// A peer algorithm, as the benchmark drives it: job set and replica count in,
// owner ordinal per job out. Stateless peers ignore the previous layout.
export interface JobSet {
  readonly names: readonly string[];
  /** Two independent 32-bit hashes per job: one key for 32-bit schemes, both for the 64-bit jump hash. */
  readonly hashA: Uint32Array;
  readonly hashB: Uint32Array;
}

export interface PreviousLayout {
  readonly jobs: JobSet;
  readonly owner: Int32Array;
  readonly replicas: number;
}

export interface Algorithm {
  readonly name: string;
  layout(jobs: JobSet, replicas: number, previous?: PreviousLayout): Int32Array;
}
