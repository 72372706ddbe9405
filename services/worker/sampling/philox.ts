// Counter-based random numbers for sampling: Philox4x32-10 (Salmon, Moraes, Dror and Shaw, "Parallel
// random numbers: as easy as 1, 2, 3", SC 2011; the generator of cuRAND, PyTorch and JAX), keyed by a
// request's seed, its counter the position of the token being drawn. A draw is a pure function of
// (seed, position, draw index): no generator state follows a request, so a prefill worker that samples
// the first token and the decode worker that samples the rest, a worker a request migrates to, or the
// last stage of a parallel group that samples for rank 0 all draw what a single worker would.
// 32-bit words only (no BigInt): one block is ~20 multiplications, next to nothing beside the
// vocabulary-wide pass each draw serves.
import { randomSeed } from "./rng.ts";

const MASK64 = (1n << 64n) - 1n;
const M0 = 0xd2511f53;
const M1 = 0xcd9e8d57;
const W0 = 0x9e3779b9;
const W1 = 0xbb67ae85;
const TWO_POW_26 = 67_108_864;
const TWO_POW_32 = 4_294_967_296;
const TWO_POW_53 = 9_007_199_254_740_992;

/** The high 32 bits of the 64-bit product of two unsigned 32-bit words (exact, in 16-bit halves). */
function mulHi(a: number, b: number): number {
  const aLo = a & 0xffff;
  const aHi = a >>> 16;
  const bLo = b & 0xffff;
  const bHi = b >>> 16;
  const loHi = aLo * bHi;
  const hiLo = aHi * bLo;
  const mid = ((aLo * bLo) >>> 16) + (loHi & 0xffff) + (hiLo & 0xffff);
  return (aHi * bHi + (loHi >>> 16) + (hiLo >>> 16) + (mid >>> 16)) >>> 0;
}

const block = new Uint32Array(4);

/** Ten Philox rounds over counter (c0..c3) with key (k0, k1); the output words land in `block`. */
function philoxInto(c0: number, c1: number, c2: number, c3: number, k0: number, k1: number): void {
  for (let round = 0; round < 10; round++) {
    if (round > 0) {
      k0 = (k0 + W0) >>> 0;
      k1 = (k1 + W1) >>> 0;
    }
    const hi0 = mulHi(M0, c0);
    const lo0 = Math.imul(M0, c0) >>> 0;
    const hi1 = mulHi(M1, c2);
    const lo1 = Math.imul(M1, c2) >>> 0;
    c0 = (hi1 ^ c1 ^ k0) >>> 0;
    c1 = lo1;
    c2 = (hi0 ^ c3 ^ k1) >>> 0;
    c3 = lo0;
  }
  block[0] = c0;
  block[1] = c1;
  block[2] = c2;
  block[3] = c3;
}

/** Philox4x32-10 of one counter and key, as unsigned words (for Random123's known-answer vectors). */
export function philox4x32(
  counter: readonly [number, number, number, number],
  key: readonly [number, number],
): [number, number, number, number] {
  philoxInto(
    counter[0] >>> 0,
    counter[1] >>> 0,
    counter[2] >>> 0,
    counter[3] >>> 0,
    key[0] >>> 0,
    key[1] >>> 0,
  );
  return [block[0]!, block[1]!, block[2]!, block[3]!];
}

/** A request's random numbers: uniform draws addressed by (position, draw index) under its seed. */
export class CounterRng {
  /** The key, 0 <= seed < 2^64. */
  readonly seed: bigint;
  readonly #k0: number;
  readonly #k1: number;

  constructor(seed: bigint) {
    if (seed < 0n || seed > MASK64) throw new RangeError(`seed out of range 0..2^64-1: ${seed}`);
    this.seed = seed;
    this.#k0 = Number(seed & 0xffffffffn);
    this.#k1 = Number(seed >> 32n);
  }

  /** Keyed by a seed from crypto, for requests that give none. */
  static random(): CounterRng {
    return new CounterRng(randomSeed());
  }

  /**
   * A float in [0, 1) with 53 random bits for the token at `position` (its index in prompt + output),
   * draw `draw` of it (0: the token's sampling draw; others are free for paths that need more than one
   * per token). Counter = (position low word, position high word, draw, 0).
   */
  uniform(position: number, draw = 0): number {
    if (!(Number.isSafeInteger(position) && position >= 0))
      throw new RangeError(`position must be a non-negative safe integer: ${position}`);
    philoxInto(position >>> 0, Math.floor(position / TWO_POW_32) >>> 0, draw >>> 0, 0, this.#k0, this.#k1);
    return ((block[0]! >>> 5) * TWO_POW_26 + (block[1]! >>> 6)) / TWO_POW_53;
  }
}
