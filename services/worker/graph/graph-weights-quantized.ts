// `tessera serve --quantization int4` (and int8 given a block size): projection matrices kept
// block-quantized (weight-only), the product run by onnxruntime's com.microsoft MatMulNBits:
// y = x @ dequant(W)^T with W's codes packed as model/quantize-blocks.ts writes them. Each tensor-parallel rank quantizes only its own slice.
// A GPTQ/AWQ checkpoint's matrices reach the same product already quantized, their codes repacked into
// that layout (model/prequantized-repack.ts), with a Gather of the activations first for act-order GPTQ.
// accuracy_level 4 lets MatMulNBits quantize the activations to int8 per block too and run int8 dot
// products, the only fast path on this CPU.
// Why MatMulNBits (onnxruntime-node 1.30, CPU EP, 1 thread, AMD EPYC with AVX-512; a 12-layer stack of
// the base preset's projections [768,768] [512,768] [768,768] [2048,768] x2 [768,2048], block size 32,
// symmetric; per step, batch-1 decode / 16 rows; random weights, a throwaway script not kept):
//   float32 MatMul (prepacked)             11.7 ms / 26.5 ms
//   int8 DequantizeLinear(axis 1) + MatMul 34.9 ms / 48.6 ms  (opset 17: per channel only; the
//                                          dequantization runs every step, and no fusion applies)
//   MatMulNBits bits 4, accuracy_level 0   10.6 ms / 38.2 ms   level 1: 10.9 / 38.1
//   MatMulNBits bits 4, accuracy_level 4    4.0 ms / 17.7 ms
//   MatMulNBits bits 8, accuracy_level 0  121.8 ms / 154.1 ms  level 1: 84.4 / 93.5 (no fast 8-bit
//                                          float kernel in 1.30; 8 bits is accepted)
//   MatMulNBits bits 8, accuracy_level 4    4.2 ms / 13.1 ms
// Prefill too (`npm run bench -- quantization`: the whole base-preset model, a 128-token step, CPU ms,
// 1 thread; float32 ~103): levels 0 and 1 dequantize to float32 and take float32's time (int4 100-110,
// int8 ~177), level 4 is the fastest at every block size (int4 ~90 at blocks of 32, ~70 at 128, ~66 at
// 256), so one level serves prefill and decode and a step mixing both needs no second graph.

import { toFloat32 } from "../model/dtype.ts";
import type { RepackedMatrix } from "../model/prequantized-repack.ts";
import type { BlockQuantOptions } from "../model/quantize-blocks.ts";
import { quantizeBlocks } from "../model/quantize-blocks.ts";
import type { TensorSlice } from "../model/tensor-slice.ts";
import type { WeightSource } from "./graph-names.ts";
import { type GraphBuilder, MS_DOMAIN } from "./onnx-builder.ts";

/** MatMulNBits accuracy_level: int8 activations (see the header). */
export const ACCURACY_LEVEL = 4;

/** A matrix's MatMulNBits initializers, with what its product (or a row lookup) needs. */
export interface NBitsMatrix {
  key: string;
  inputs: string[];
  out: number;
  in: number;
  bits: number;
  blockSize: number;
  /** Act-order GPTQ: an int64 initializer of the input feature order to gather x by. */
  perm?: string | undefined;
  /** The scales and packed zero points behind `inputs` (quantizedRows lays them out for its op). */
  scales: Float32Array;
  zeroPoints?: Uint8Array | undefined;
}

/** The initializers of a quantized matrix (or slice) `key` [out, in], added under `key`-derived names. */
export function addQuantized(
  g: GraphBuilder,
  source: WeightSource,
  q: BlockQuantOptions,
  name: string,
  shape: [number, number],
  key: string,
  slice?: TensorSlice,
): NBitsMatrix {
  const t = source.readStored(name, shape, slice);
  const [out, inDim] = t.shape as [number, number];
  const m = quantizeBlocks(toFloat32(t.bytes, t.dtype), out, inDim, q);
  return addNBits(g, { ...m, bits: q.bits, blockSize: q.blockSize }, key);
}

/** The initializers of a matrix already in MatMulNBits's layout (a repacked GPTQ/AWQ matrix). */
export function addNBits(g: GraphBuilder, m: RepackedMatrix, key: string): NBitsMatrix {
  const inputs = [
    g.uint8Weight(`${key}.q${m.bits}`, m.packed, [m.out, m.blocks, (m.blockSize * m.bits) / 8]),
    g.weight(`${key}.scales`, m.scales, [m.out * m.blocks]),
  ];
  if (m.zeroPoints) inputs.push(g.uint8Weight(`${key}.zero_points`, m.zeroPoints, [m.zeroPoints.length]));
  const perm = m.perm && g.ints([...m.perm]);
  const { out, in: inDim, bits, blockSize, scales, zeroPoints } = m;
  return { key, inputs, out, in: inDim, bits, blockSize, perm, scales, zeroPoints };
}

/**
 * Rows `ids` of a quantized table [rows, in] as float32 [N, in], read from the same packed codes as its
 * MatMulNBits product (a tied embedding and LM head): com.microsoft GatherBlockQuantized takes uint8
 * codes in MatMulNBits's layout and its default zero points (8, 128). Its scales (and zero points, one
 * per block) need the codes' rank, [rows, blocks, 1], which MatMulNBits refuses, so they are a second,
 * small initializer (4 bytes per block). Undefined where the rows cannot be read so: act-order codes,
 * or an input width that is not whole blocks.
 */
export function quantizedRows(g: GraphBuilder, ids: string, m: NBitsMatrix): string | undefined {
  if (m.perm || m.in % m.blockSize !== 0) return undefined;
  const blocks = m.in / m.blockSize;
  const inputs = [m.inputs[0]!, ids, g.weight(`${m.key}.row_scales`, m.scales, [m.out, blocks, 1])];
  if (m.zeroPoints) {
    const zeros = unpackZeroPoints(m.zeroPoints, m.out, blocks, m.bits);
    inputs.push(g.uint8Weight(`${m.key}.row_zero_points`, zeros, [m.out, blocks, 1]));
  }
  const attrs = { gather_axis: 0, quantize_axis: 2, block_size: m.blockSize, bits: m.bits };
  const rows = g.op("GatherBlockQuantized", inputs, attrs, MS_DOMAIN); // [N, blocks, blockSize]
  return g.op("Reshape", [rows, g.ints([-1, m.in])]);
}

/** MatMulNBits's zero points [rows, ceil(blocks * bits / 8)] (4-bit: two a byte) as one byte per block. */
function unpackZeroPoints(packed: Uint8Array, rows: number, blocks: number, bits: number): Uint8Array {
  const perRow = Math.ceil((blocks * bits) / 8);
  const out = new Uint8Array(rows * blocks);
  for (let r = 0; r < rows; r++)
    for (let b = 0; b < blocks; b++) {
      const byte = packed[r * perRow + (bits === 4 ? b >> 1 : b)]!;
      out[r * blocks + b] = bits === 4 ? (b & 1 ? byte >> 4 : byte & 0x0f) : byte;
    }
  return out;
}

/** x [N, in] @ W^T through MatMulNBits, for a matrix added by addQuantized or addNBits. */
export function quantizedProduct(
  g: GraphBuilder,
  x: string,
  m: NBitsMatrix,
  accuracyLevel = ACCURACY_LEVEL,
): string {
  const a = m.perm ? g.op("Gather", [x, m.perm], { axis: -1 }) : x;
  return g.op(
    "MatMulNBits",
    [a, ...m.inputs],
    { K: m.in, N: m.out, bits: m.bits, block_size: m.blockSize, accuracy_level: accuracyLevel },
    MS_DOMAIN,
  );
}
