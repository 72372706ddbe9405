// Seeded pseudo-random streams: xoshiro128** (32-bit words, no BigInt on the hot path) seeded by
// splitmix64 from a 64-bit seed, for reproducible test data and benchmark inputs; and the crypto seed
// of requests that give none. The sampler's own draws are not a stream but counter-based (philox.ts):
// a stream's next number depends on how many came before, which a request moved to another process
// would have to carry along.
import { randomBytes } from "node:crypto";

const MASK64 = (1n << 64n) - 1n;
const TWO_POW_26 = 67_108_864;
const TWO_POW_53 = 9_007_199_254_740_992;

/** The first `count` outputs of splitmix64 started at `seed` (taken modulo 2^64). */
export function splitMix64(seed: bigint, count: number): bigint[] {
  let state = BigInt.asUintN(64, seed);
  const out: bigint[] = [];
  for (let i = 0; i < count; i++) {
    state = (state + 0x9e3779b97f4a7c15n) & MASK64;
    let z = state;
    z = ((z ^ (z >> 30n)) * 0xbf58476d1ce4e5b9n) & MASK64;
    z = ((z ^ (z >> 27n)) * 0x94d049bb133111ebn) & MASK64;
    out.push(z ^ (z >> 31n));
  }
  return out;
}

/** A fresh 64-bit seed from the operating system's cryptographic source. */
export function randomSeed(): bigint {
  return randomBytes(8).readBigUInt64LE(0);
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}

/** xoshiro128**: a deterministic stream of 32-bit words and floats in [0, 1). */
export class Rng {
  readonly seed: bigint;
  #s0: number;
  #s1: number;
  #s2: number;
  #s3: number;

  /** Seeds the 128-bit state with two splitmix64 outputs of `seed` (0 <= seed < 2^64). */
  constructor(seed: bigint) {
    if (seed < 0n || seed > MASK64) throw new RangeError(`seed out of range 0..2^64-1: ${seed}`);
    this.seed = seed;
    const [a = 0n, b = 0n] = splitMix64(seed, 2);
    this.#s0 = Number(a & 0xffffffffn) | 0;
    this.#s1 = Number(a >> 32n) | 0;
    this.#s2 = Number(b & 0xffffffffn) | 0;
    this.#s3 = Number(b >> 32n) | 0;
    // splitmix64 is a bijection, so two consecutive outputs are never both zero; guard anyway,
    // since an all-zero state would emit zeros forever.
    if ((this.#s0 | this.#s1 | this.#s2 | this.#s3) === 0) this.#s0 = 1;
  }

  /** A stream seeded from crypto, for requests that give no seed. */
  static random(): Rng {
    return new Rng(randomSeed());
  }

  /** Builds a generator directly from its four state words (for reference vectors in tests). */
  static fromState(s0: number, s1: number, s2: number, s3: number): Rng {
    const rng = new Rng(0n);
    rng.#s0 = s0 | 0;
    rng.#s1 = s1 | 0;
    rng.#s2 = s2 | 0;
    rng.#s3 = s3 | 0;
    return rng;
  }

  /** The next 32-bit word, as an unsigned integer. */
  nextUint32(): number {
    const s1 = this.#s1;
    const result = Math.imul(rotl(Math.imul(s1, 5), 7), 9) >>> 0;
    const t = s1 << 9;
    this.#s2 ^= this.#s0;
    this.#s3 ^= s1;
    this.#s1 = s1 ^ this.#s2;
    this.#s0 ^= this.#s3;
    this.#s2 ^= t;
    this.#s3 = rotl(this.#s3, 11);
    return result;
  }

  /** A float in [0, 1) with 53 random bits (two words). */
  nextFloat(): number {
    const hi = this.nextUint32() >>> 5; // 27 bits
    const lo = this.nextUint32() >>> 6; // 26 bits
    return (hi * TWO_POW_26 + lo) / TWO_POW_53;
  }
}
