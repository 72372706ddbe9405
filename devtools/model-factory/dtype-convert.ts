// float32 → float16 / bfloat16 conversion for writing half-precision checkpoints.
// Both round to nearest, ties to even, as torch's `.to(torch.float16 / torch.bfloat16)` does.

const f32 = new Float32Array(1);
const f32Bits = new Uint32Array(f32.buffer);

/** The IEEE-754 bit pattern of `x` rounded to float32. */
export function f32Bits32(x: number): number {
  f32[0] = x;
  return f32Bits[0]!;
}

/** The float32 whose bit pattern is `bits`. */
export function f32FromBits(bits: number): number {
  f32Bits[0] = bits >>> 0;
  return f32[0]!;
}

/**
 * float32 bits → IEEE half bits. Rounds to nearest even, overflows to ±inf, produces half subnormals
 * (down to 2^-24) and signed zeros; NaN stays NaN (quiet, sign kept).
 */
export function f32BitsToF16Bits(bits: number): number {
  const sign = (bits >>> 16) & 0x8000;
  const exp = (bits >>> 23) & 0xff;
  const mant = bits & 0x7fffff;
  if (exp === 0xff) return mant === 0 ? sign | 0x7c00 : sign | 0x7e00 | (mant >>> 13);
  const e = exp - 127 + 15; // biased half exponent
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    // Half subnormal (or zero): value = m × 2^-24 with m = (1.mant × 2^23) >> (14 - e).
    if (e < -10) return sign; // below half of the smallest subnormal
    const full = mant | 0x800000;
    const shift = 14 - e;
    let m = full >>> shift;
    const rem = full & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && (m & 1) === 1)) m++; // may carry into the smallest normal: still right
    return sign | m;
  }
  let h = sign | (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && (h & 1) === 1)) h++; // a carry may reach the exponent, up to inf
  return h;
}

/** float32 bits → bfloat16 bits: the upper half, rounded to nearest even; NaN → quiet NaN. */
export function f32BitsToBf16Bits(bits: number): number {
  const b = bits >>> 0;
  if ((b & 0x7fffffff) > 0x7f800000) return ((b >>> 16) & 0x8000) | 0x7fc0;
  return ((b + 0x7fff + ((b >>> 16) & 1)) >>> 16) & 0xffff;
}

/** A number → half bits (rounding first to float32, as a Float32Array source would). */
export function toF16Bits(x: number): number {
  return f32BitsToF16Bits(f32Bits32(x));
}

/** A number → bfloat16 bits (rounding first to float32). */
export function toBf16Bits(x: number): number {
  return f32BitsToBf16Bits(f32Bits32(x));
}

/** Converts a whole float32 array to half bits. */
export function f32ArrayToF16(
  src: Float32Array,
  dst: Uint16Array = new Uint16Array(src.length),
): Uint16Array {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < bits.length; i++) dst[i] = f32BitsToF16Bits(bits[i]!);
  return dst;
}

/** Converts a whole float32 array to bfloat16 bits. */
export function f32ArrayToBf16(
  src: Float32Array,
  dst: Uint16Array = new Uint16Array(src.length),
): Uint16Array {
  const bits = new Uint32Array(src.buffer, src.byteOffset, src.length);
  for (let i = 0; i < bits.length; i++) dst[i] = f32BitsToBf16Bits(bits[i]!);
  return dst;
}
