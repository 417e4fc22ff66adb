// Integer mixing for the peers and the bench's inputs, owned here so that they
// stay as measured whatever lib/assignment/hash.ts comes to use: murmur3's
// 32-bit finaliser and a (job hash, worker ordinal) pair score built on it.

/** murmur3's fmix32 as (shift, multiplier) rounds, then a last xor-shift. */
const FMIX32_ROUNDS = [
  [16, 0x85ebca6b],
  [13, 0xc2b2ae35],
] as const;

/** murmur3's 32-bit finaliser: a bijection that mixes every input bit into every output bit. */
export function fmix32(value: number): number {
  let h = value >>> 0;
  for (const [shift, multiplier] of FMIX32_ROUNDS) h = Math.imul(h ^ (h >>> shift), multiplier);
  return (h ^ (h >>> 16)) >>> 0;
}

/** A 32-bit hash of a (job hash, worker ordinal) pair, for per-worker scoring. */
export function mixPair(jobHash: number, ordinal: number): number {
  return fmix32((jobHash ^ Math.imul(ordinal + 1, 0x9e3779b9)) >>> 0);
}
