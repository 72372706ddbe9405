// GPTQ and AWQ packed codes repacked into com.microsoft MatMulNBits's layout (quantize-blocks.ts
// describes it), code by code: no float weight is ever made, and every value is kept exactly, so the
// product equals the checkpoint's own dequantization w = (q - z) * s per group.
// The checkpoint layouts, for a Linear with `in` input and `out` output features, `groups` groups
// (read from AutoGPTQ's QuantLinear.pack, qlinear_cuda_old.py, and AutoAWQ's WQLinear_GEMM.from_linear
// and utils/packing_utils.py):
// - GPTQ qweight [in * bits / 32, out] int32: word (i, o) holds input rows 32/bits * i + k at bits k,
//   lowest first, of output column o. qzeros [groups, out * bits / 32] int32 packs output columns the
//   same way along a row. scales [groups, out] float16. g_idx [in] int32: each input row's group.
//   Format v1 ("gptq", AutoGPTQ) stores every zero point minus one (`zeros -= 1` before packing; the
//   kernels add it back); v2 ("gptq_v2", GPTQModel) stores it as is.
// - AWQ GEMM qweight [in, out / 8] int32: word (i, c) holds output columns 8c + ORDER[k] at bits 4k,
//   ORDER = [0, 2, 4, 6, 1, 3, 5, 7]; qzeros [groups, out / 8] the same; scales [groups, out] float16;
//   the group of input row i is i / group_size.
// Act-order GPTQ (desc_act) gives input rows groups out of order (g_idx); MatMulNBits wants each block
// of consecutive input features in one group (its g_idx input is deprecated), so such a matrix takes its
// input rows in g_idx order and its product gathers the activations by the same permutation.
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { PrequantizedFormat } from "./prequantized-config.ts";
import type { QuantizedMatrix } from "./quantize-blocks.ts";
import type { TensorSlice } from "./tensor-slice.ts";

export interface PackedTensors {
  qweight: Int32Array;
  qzeros: Int32Array;
  /** [groups, out], widened from float16 (exactly). */
  scales: Float32Array;
  /** GPTQ only; absent means row i is in group i / group_size. */
  gIdx?: Int32Array | undefined;
}

export interface RepackedMatrix extends QuantizedMatrix {
  bits: 4 | 8;
  blockSize: number;
  /** Input feature order the codes are stored in (act-order): the product gathers x by it first. */
  perm?: Int32Array | undefined;
}

/** The shapes of the packed tensors of a Linear [out, in] (for the checks at read). */
export function packedShapes(
  f: PrequantizedFormat,
  out: number,
  inDim: number,
): { qweight: number[]; qzeros: number[]; scales: number[]; gIdx: number[] } {
  const pack = 32 / f.bits;
  const groups = f.groupSize === -1 ? 1 : Math.ceil(inDim / f.groupSize);
  return f.method === "gptq"
    ? { qweight: [inDim / pack, out], qzeros: [groups, out / pack], scales: [groups, out], gIdx: [inDim] }
    : { qweight: [inDim, out / pack], qzeros: [groups, out / pack], scales: [groups, out], gIdx: [inDim] };
}

const AWQ_SHIFT = [0, 4, 1, 5, 2, 6, 3, 7].map((k) => 4 * k); // output column 8c + j sits at nibble AWQ_SHIFT[j] / 4

/**
 * The matrix [out, in] (or `slice` of it: rows = output features, columns = input features) in
 * MatMulNBits's layout. `name` is for error messages.
 */
export function repackPrequantized(
  name: string,
  f: PrequantizedFormat,
  t: PackedTensors,
  out: number,
  inDim: number,
  slice?: TensorSlice,
): RepackedMatrix {
  const bits = f.bits;
  const mask = (1 << bits) - 1;
  const pack = 32 / bits;
  if (inDim % pack !== 0 || out % pack !== 0)
    throw bad(name, `[${out}, ${inDim}] is not a multiple of ${pack} in both dimensions`);
  const rows = slice?.axis === 0 ? [slice.start, slice.end] : [0, out];
  const cols = slice?.axis === 1 ? [slice.start, slice.end] : [0, inDim];
  const [r0, r1] = rows as [number, number];
  const [c0, c1] = cols as [number, number];
  const n = r1 - r0;
  const k = c1 - c0;
  const groups = f.groupSize === -1 ? 1 : Math.ceil(inDim / f.groupSize);
  if (t.gIdx?.some((g) => g < 0 || g >= groups))
    throw bad(name, `g_idx has a group outside 0..${groups - 1}`);
  const groupOf = (c: number) => (t.gIdx ? t.gIdx[c]! : f.groupSize === -1 ? 0 : Math.floor(c / f.groupSize));
  // A tensor-parallel rank's columns may start inside a group (o_proj's 48 of 96 with groups of 32):
  // smaller blocks that divide both share their group's scale and zero.
  let blockSize = f.groupSize === -1 ? wholeRowBlock(k) : f.groupSize;
  while (c0 % blockSize !== 0 && blockSize > 16) blockSize /= 2;
  if (c0 % blockSize !== 0)
    throw bad(
      name,
      `a tensor-parallel rank's input features ${c0}..${c1 - 1} do not start on a multiple of 16`,
    );
  const blocks = Math.ceil(k / blockSize);

  // Input features in storage order: as they are, or by group when the groups are not in blocks.
  let order: Int32Array | undefined;
  if (
    !blocksHaveOneGroup(
      Int32Array.from({ length: k }, (_, j) => c0 + j),
      groupOf,
      blockSize,
    )
  ) {
    if (slice?.axis === 1)
      throw bad(
        name,
        "act-order groups (g_idx, desc_act: true) cannot be split across tensor-parallel ranks (row-parallel o_proj/down_proj)",
      );
    order = Int32Array.from({ length: k }, (_, j) => j).sort((a, b) => groupOf(a) - groupOf(b) || a - b);
    if (!blocksHaveOneGroup(order, groupOf, blockSize))
      throw bad(name, `g_idx does not give each group ${blockSize} input rows (desc_act: true)`);
  }
  const inputAt = (j: number) => (order ? order[j]! : c0 + j);

  const codeAt: (c: number, r: number) => number =
    f.method === "gptq"
      ? (c, r) => (t.qweight[Math.floor(c / pack) * out + r]! >>> (bits * (c % pack))) & mask
      : (c, r) => (t.qweight[c * (out >> 3) + (r >> 3)]! >>> AWQ_SHIFT[r & 7]!) & mask;
  const zeroAt: (g: number, r: number) => number =
    f.method === "gptq"
      ? (g, r) =>
          ((t.qzeros[g * (out / pack) + Math.floor(r / pack)]! >>> (bits * (r % pack))) & mask) + f.zeroOffset
      : (g, r) => (t.qzeros[g * (out >> 3) + (r >> 3)]! >>> AWQ_SHIFT[r & 7]!) & mask;

  const blob = (blockSize * bits) / 8;
  const packed = new Uint8Array(n * blocks * blob);
  const scales = new Float32Array(n * blocks);
  const zpRow = Math.ceil((blocks * bits) / 8);
  const zeroPoints = new Uint8Array(n * zpRow);
  for (let b = 0; b < blocks; b++) {
    const g = groupOf(inputAt(b * blockSize));
    for (let r = 0; r < n; r++) {
      const z = zeroAt(g, r0 + r);
      if (z > mask)
        throw bad(
          name,
          `zero point ${z} of group ${g} does not fit ${bits} bits (a GPTQ v1 zero point of 0 overflowed)`,
        );
      scales[r * blocks + b] = t.scales[g * out + r0 + r]!;
      putCode(zeroPoints, r * zpRow, b, z, bits);
    }
  }
  const place = (j: number) => Math.floor(j / blockSize) * blob + ((j % blockSize) * bits) / 8;
  if (bits === 4 && !order && f.method === "gptq" && c0 % 8 === 0 && c1 % 8 === 0) {
    // A GPTQ word holds 8 consecutive input features of one output, lowest first: exactly the 4 bytes
    // MatMulNBits stores them in (its blocks are multiples of 16 features, c0 of 16). A transpose.
    const dst = new Uint32Array(packed.buffer);
    for (let i = c0 / 8; i < c1 / 8; i++) {
      const at = place(8 * i - c0) / 4;
      for (let r = 0; r < n; r++) dst[(r * blocks * blob) / 4 + at] = t.qweight[i * out + r0 + r]!;
    }
  } else if (bits === 4 && !order) {
    // AWQ: a word holds 8 output features of one input; two inputs' words make one byte per output.
    for (let j = 0; j < k; j += 2) {
      const c = c0 + j;
      const at = place(j);
      for (let r = 0; r < n; r++) {
        const o = r0 + r;
        const shift = AWQ_SHIFT[o & 7]!;
        const lo = (t.qweight[c * (out >> 3) + (o >> 3)]! >>> shift) & 15;
        const hi = j + 1 < k ? (t.qweight[(c + 1) * (out >> 3) + (o >> 3)]! >>> shift) & 15 : 0;
        packed[r * blocks * blob + at] = lo | (hi << 4);
      }
    }
  } else {
    for (let j = 0; j < k; j++) {
      const c = inputAt(j);
      const at = Math.floor(j / blockSize) * blob;
      const within = j % blockSize;
      for (let r = 0; r < n; r++) putCode(packed, r * blocks * blob + at, within, codeAt(c, r0 + r), bits);
    }
  }
  return {
    out: n,
    in: k,
    blocks,
    packed,
    scales,
    zeroPoints,
    bits,
    blockSize,
    perm: order && Int32Array.from(order, (j) => c0 + j),
  };
}

/** group_size -1 (one group per output feature): any block size works; the largest that divides k. */
function wholeRowBlock(k: number): number {
  for (let b = 128; b >= 16; b /= 2) if (k % b === 0) return b;
  return 128;
}

function blocksHaveOneGroup(inputs: Int32Array, groupOf: (c: number) => number, blockSize: number): boolean {
  for (let j = 0; j < inputs.length; j++) {
    if (j % blockSize !== 0 && groupOf(inputs[j]!) !== groupOf(inputs[j - (j % blockSize)]!)) return false;
  }
  return true;
}

function putCode(dst: Uint8Array, at: number, index: number, code: number, bits: 4 | 8): void {
  if (bits === 8) dst[at + index] = code;
  else dst[at + (index >> 1)]! |= index & 1 ? code << 4 : code;
}

function bad(name: string, why: string): TesseraError {
  return new TesseraError(Code.INVALID_ARGUMENT, `pre-quantized weight ${name}: ${why}`);
}
