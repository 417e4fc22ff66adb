// Jump consistent hash: J. Lamping and E. Veach, "A Fast, Minimal Memory,
// Consistent Hash Algorithm", 2014 (arXiv:1406.2294). The 64-bit linear
// congruential step key = key * 2862933555777941757 + 1 is done exactly in
// 32-bit halves, so results match the paper's C++ for the same 64-bit key
// (here the two 32-bit job hashes, high and low).
import type { Algorithm, JobSet } from './types.js';

const MULT_HI = 0x27bb2ee6;
const MULT_LO = 0x87b0b0fd;

export function jumpHash(keyHi: number, keyLo: number, buckets: number): number {
  let hi = keyHi >>> 0;
  let lo = keyLo >>> 0;
  let b = -1;
  let j = 0;
  while (j < buckets) {
    b = j;
    // (hi:lo) = (hi:lo) * MULT + 1 mod 2^64
    const a0 = lo & 0xffff;
    const a1 = lo >>> 16;
    const b0 = MULT_LO & 0xffff;
    const b1 = MULT_LO >>> 16;
    const p00 = a0 * b0;
    const p01 = a0 * b1;
    const p10 = a1 * b0;
    const mid = (p00 >>> 16) + (p01 & 0xffff) + (p10 & 0xffff);
    const carry = a1 * b1 + Math.floor(p01 / 65536) + Math.floor(p10 / 65536) + Math.floor(mid / 65536);
    const newLo = Math.imul(lo, MULT_LO) >>> 0;
    let newHi = (carry + Math.imul(lo, MULT_HI) + Math.imul(hi, MULT_LO)) >>> 0;
    lo = (newLo + 1) >>> 0;
    if (lo === 0) newHi = (newHi + 1) >>> 0;
    hi = newHi;
    // j = (b + 1) * (2^31 / ((key >> 33) + 1))
    j = Math.floor((b + 1) * (2147483648 / ((hi >>> 1) + 1)));
  }
  return b;
}

export const jump: Algorithm = {
  name: 'jump hash',
  layout(jobs: JobSet, replicas: number): Int32Array {
    const owner = new Int32Array(jobs.names.length);
    for (let i = 0; i < owner.length; i++) owner[i] = jumpHash(jobs.hashA[i]!, jobs.hashB[i]!, replicas);
    return owner;
  },
};
