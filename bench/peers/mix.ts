// Integer mixing for the peers and the bench's inputs: murmur3's 32-bit
// finaliser (the one lib/assignment/hash.ts applies after FNV-1a, kept private
// there) and a (job hash, worker) pair score built on it.

/** murmur3's 32-bit finaliser: a bijection that mixes every input bit into every output bit. */
export function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A 32-bit hash of a (job hash, worker ordinal) pair, for per-worker scoring. */
export function mixPair(jobHash: number, ordinal: number): number {
  return fmix32((jobHash ^ Math.imul(ordinal + 1, 0x9e3779b9)) >>> 0);
}
