// ggml's Q8_0 and Q4_0 block formats, written bit for bit as ggml's reference quantizers
// (quantize_row_q8_0_ref / quantize_row_q4_0_ref in ggml-quants.c) write them, so that a GGUF we
// convert holds what llama.cpp's own tools would have produced from the same float32 weights.
// Both cut a row into blocks of 32 values; each block is an IEEE half scale d followed by its codes:
//   Q8_0 (34 bytes): d = max|x| / 127, q = roundf(x / d) as int8 (ties away from zero);
//   Q4_0 (18 bytes): d = (the value of largest magnitude, sign kept) / -8,
//                    q = min(15, trunc(x / d + 8.5)), value j in the low nibble of byte j and value
//                    j + 16 in its high nibble. Decoding: x = (q - 8) * d.
// The arithmetic is float32 as in C (Math.fround at every step), and the quantizers multiply by 1/d
// computed from the float32 d, not from its half rounding, as ggml does.
import { f32Bits32, f32BitsToF16Bits } from "../model-factory/dtype-convert.ts";

/** Values per block, both formats. */
export const QK = 32;
export const Q8_0_BLOCK_BYTES = 2 + QK;
export const Q4_0_BLOCK_BYTES = 2 + QK / 2;

const fr = Math.fround;

/** C's roundf: halves away from zero. */
function roundf(x: number): number {
  return x < 0 ? -Math.round(-x) : Math.round(x);
}

function blocksOf(x: Float32Array): number {
  if (x.length % QK !== 0)
    throw new Error(`ggml quantization: length ${x.length} is not a multiple of ${QK}`);
  return x.length / QK;
}

/** Row-major values (length a multiple of 32) -> Q8_0 blocks. */
export function quantizeQ8_0(x: Float32Array): Uint8Array {
  const nb = blocksOf(x);
  const out = new Uint8Array(nb * Q8_0_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  for (let b = 0; b < nb; b++) {
    const base = b * QK;
    let amax = 0;
    for (let j = 0; j < QK; j++) amax = Math.max(amax, Math.abs(x[base + j]!));
    const d = fr(amax / 127);
    const id = d ? fr(1 / d) : 0;
    const at = b * Q8_0_BLOCK_BYTES;
    view.setUint16(at, f32BitsToF16Bits(f32Bits32(d)), true);
    for (let j = 0; j < QK; j++) view.setInt8(at + 2 + j, roundf(fr(x[base + j]! * id)));
  }
  return out;
}

/** Row-major values (length a multiple of 32) -> Q4_0 blocks. */
export function quantizeQ4_0(x: Float32Array): Uint8Array {
  const nb = blocksOf(x);
  const out = new Uint8Array(nb * Q4_0_BLOCK_BYTES);
  const view = new DataView(out.buffer);
  const half = QK / 2;
  const code = (v: number, id: number) => Math.min(15, Math.trunc(fr(fr(v * id) + 8.5)));
  for (let b = 0; b < nb; b++) {
    const base = b * QK;
    let amax = 0;
    let max = 0;
    for (let j = 0; j < QK; j++) {
      const v = x[base + j]!;
      if (amax < Math.abs(v)) {
        amax = Math.abs(v);
        max = v;
      }
    }
    const d = fr(max / -8);
    const id = d ? fr(1 / d) : 0;
    const at = b * Q4_0_BLOCK_BYTES;
    view.setUint16(at, f32BitsToF16Bits(f32Bits32(d)), true);
    for (let j = 0; j < half; j++) {
      out[at + 2 + j] = code(x[base + j]!, id) | (code(x[base + half + j]!, id) << 4);
    }
  }
  return out;
}

/** IEEE half bits -> number. */
export function f16ToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >>> 10) & 0x1f;
  const mant = h & 0x3ff;
  if (exp === 0) return sign * mant * 2 ** -24;
  if (exp === 0x1f) return mant ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * (1 + mant / 1024) * 2 ** (exp - 15);
}

/** Q8_0 blocks -> values (as ggml's dequantize_row_q8_0). */
export function dequantizeQ8_0(blocks: Uint8Array): Float32Array {
  const nb = blocks.length / Q8_0_BLOCK_BYTES;
  const out = new Float32Array(nb * QK);
  const view = new DataView(blocks.buffer, blocks.byteOffset, blocks.byteLength);
  for (let b = 0; b < nb; b++) {
    const at = b * Q8_0_BLOCK_BYTES;
    const d = f16ToNumber(view.getUint16(at, true));
    for (let j = 0; j < QK; j++) out[b * QK + j] = view.getInt8(at + 2 + j) * d;
  }
  return out;
}

/** Q4_0 blocks -> values (as ggml's dequantize_row_q4_0). */
export function dequantizeQ4_0(blocks: Uint8Array): Float32Array {
  const nb = blocks.length / Q4_0_BLOCK_BYTES;
  const out = new Float32Array(nb * QK);
  const view = new DataView(blocks.buffer, blocks.byteOffset, blocks.byteLength);
  const half = QK / 2;
  for (let b = 0; b < nb; b++) {
    const at = b * Q4_0_BLOCK_BYTES;
    const d = f16ToNumber(view.getUint16(at, true));
    for (let j = 0; j < half; j++) {
      const byte = blocks[at + 2 + j]!;
      out[b * QK + j] = ((byte & 0x0f) - 8) * d;
      out[b * QK + half + j] = ((byte >>> 4) - 8) * d;
    }
  }
  return out;
}
