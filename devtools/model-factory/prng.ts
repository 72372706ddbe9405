// A small seeded PRNG (xoshiro128**, seeded through splitmix32) and a "normal-ish" sampler built only
// from integer arithmetic and one multiply, so that the same seed gives the same float32 bits on every
// platform and Node version (Math.log / Math.cos are not guaranteed bit-identical across engines).

/** 32-bit FNV-1a of a string's UTF-16 code units. */
export function fnv1a32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

function splitmix32(state: { x: number }): number {
  state.x = (state.x + 0x9e3779b9) | 0;
  let z = state.x;
  z = Math.imul(z ^ (z >>> 16), 0x85ebca6b);
  z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35);
  return (z ^ (z >>> 16)) >>> 0;
}

/** xoshiro128**: 32-bit outputs, period 2^128 − 1. */
export class Rng {
  private s0: number;
  private s1: number;
  private s2: number;
  private s3: number;

  /** `seed` is any safe integer; `stream` names an independent stream (e.g. a tensor name). */
  constructor(seed: number, stream = "") {
    const lo = seed >>> 0;
    const hi = Math.floor(seed / 2 ** 32) >>> 0;
    const st = { x: lo ^ Math.imul(hi, 0x27d4eb2f) ^ fnv1a32(stream) };
    splitmix32(st);
    st.x ^= Math.imul(fnv1a32(`${stream}#${hi}`), 0x165667b1);
    this.s0 = splitmix32(st);
    this.s1 = splitmix32(st);
    this.s2 = splitmix32(st);
    this.s3 = splitmix32(st);
    if ((this.s0 | this.s1 | this.s2 | this.s3) === 0) this.s0 = 1;
  }

  /** Next 32-bit unsigned integer. */
  nextU32(): number {
    const s1 = this.s1;
    const r = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
    const t = s1 << 9;
    this.s2 ^= this.s0;
    this.s3 ^= this.s1;
    this.s1 ^= this.s2;
    this.s0 ^= this.s3;
    this.s2 ^= t;
    this.s3 = rotl(this.s3, 11);
    return r >>> 0;
  }

  /** Uniform in [0, 1) with 32 random bits. */
  nextFloat(): number {
    return this.nextU32() / 2 ** 32;
  }

  /**
   * Fills `out` with mean-0, standard-deviation-`std` samples: the sum of four 16-bit uniforms
   * (Irwin–Hall, bell-shaped, bounded at ±3.46 σ), standardised.
   */
  fillNormal(out: Float32Array, std: number): Float32Array {
    const scale = std / IRWIN_HALL_SD;
    // nextU32 inlined with the state in locals: this loop makes every weight of a checkpoint.
    let s0 = this.s0;
    let s1 = this.s1;
    let s2 = this.s2;
    let s3 = this.s3;
    for (let i = 0; i < out.length; i++) {
      let r = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
      let t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = rotl(s3, 11);
      const a = r >>> 0;
      r = Math.imul(rotl(Math.imul(s1, 5), 7), 9);
      t = s1 << 9;
      s2 ^= s0;
      s3 ^= s1;
      s1 ^= s2;
      s0 ^= s3;
      s2 ^= t;
      s3 = rotl(s3, 11);
      const b = r >>> 0;
      const u = (a & 0xffff) + (a >>> 16) + (b & 0xffff) + (b >>> 16);
      out[i] = (u - IRWIN_HALL_MEAN) * scale;
    }
    this.s0 = s0;
    this.s1 = s1;
    this.s2 = s2;
    this.s3 = s3;
    return out;
  }
}

const IRWIN_HALL_MEAN = 2 * 65535; // 4 × 65535 / 2
const IRWIN_HALL_SD = Math.sqrt((65536 * 65536 - 1) / 3); // √(4 × (65536² − 1) / 12)

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
