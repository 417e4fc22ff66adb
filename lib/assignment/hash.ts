// Stable string hashing: the same name hashes the same in every process and
// on every machine, which is what makes layouts reproducible by any replica
// of the `assign` function. FNV-1a over UTF-16 code units, then a murmur3
// finaliser so that names differing in one trailing character spread well.

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a of the string's UTF-16 code units, avalanched; unsigned. */
export function hash32(text: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return fmix32(h);
}

/** murmur3's 32-bit finaliser: a bijection that mixes every input bit into every output bit. */
function fmix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}
