// `--quantization int8` with per-channel codes (the int8 default, model/quantize-channels.ts): the
// product is onnxruntime's integer GEMM, com.microsoft MatMulIntegerToFloat (u8 activations x s8
// weights -> float32, times the columns' scales), which MLAS runs on AMX tiles or VNNI dot products,
// then a Mul by each row's scale.
// The activations are quantized per row (per token), symmetrically: s = max|x_row| / 127, codes
// round(x / s) + 128 as uint8 with zero point 128. A row's codes depend on that row alone, so a
// request's logits do not depend on what else its step batches (a per-tensor scale, as
// DynamicQuantizeMatMul takes, would let one prompt's large activations coarsen another's).
// The codes of one input are made once and shared by its products (q, k and v; gate and up).
// Why (onnxruntime-node 1.30, CPU EP, 2 threads, Intel Xeon with AMX and AVX512-VNNI; a 12-layer stack
// of the base preset's projections, best of 20 runs; devtools scratch script, not kept):
//                                       batch-1    16 rows   128 rows
//   MatMulNBits bits 8, level 4 (blocks) 3.7-4.8    12-13     67-72 ms
//   MatMulNBits bits 4, level 4 (blocks) 1.8-2.2    11-15     78-97 ms
//   float32 MatMul                       16.0       23.8      92.7 ms
//   this (per-row x, per-channel W)      2.6        3.9       20.9 ms  (measured as MatMulInteger,
//                                        Cast and two Muls; MatMulIntegerToFloat is the same product
//                                        in two fewer nodes)
//   DynamicQuantizeMatMul (per-tensor x) 5.7        7.7       29.2 ms
//   the same with a block-wise W (MatMulInteger batched over blocks, then scaled and summed): 10 / 21 /
//   133 ms: batched int8 products of 128-deep blocks do not reach the fast kernels.

import { toFloat32 } from "../model/dtype.ts";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import { quantizeChannels } from "../model/quantize-channels.ts";
import type { TensorSlice } from "../model/tensor-slice.ts";
import type { WeightSource } from "./graph-names.ts";
import { type GraphBuilder, MS_DOMAIN } from "./onnx-builder.ts";

/** A per-channel int8 matrix's initializers. */
export interface ChannelMatrix {
  key: string;
  out: number;
  in: number;
  /** s8 codes [in, out] */
  codes: string;
  /** float32 [out] */
  scales: string;
  /** s8 [out], asymmetric only */
  zeroPoints?: string | undefined;
}

/** An input's per-row uint8 codes and the row scales they were made with. */
interface RowCodes {
  codes: string;
  scales: string;
}

export class ChannelProducts {
  private readonly g: GraphBuilder;
  private readonly rows = new Map<string, RowCodes>();
  private zero128?: string;
  private one?: string;

  constructor(g: GraphBuilder) {
    this.g = g;
  }

  /** The initializers of matrix `name` [out, in] (or a rank's slice of it), quantized per channel at load. */
  add(
    source: WeightSource,
    q: QuantOptions,
    name: string,
    shape: [number, number],
    key: string,
    slice?: TensorSlice,
  ): ChannelMatrix {
    const t = source.readStored(name, shape, slice);
    const [out, inDim] = t.shape as [number, number];
    const m = quantizeChannels(toFloat32(t.bytes, t.dtype), out, inDim, q);
    const g = this.g;
    return {
      key,
      out,
      in: inDim,
      codes: g.int8Weight(`${key}.q8c`, m.codes, [inDim, out]),
      scales: g.weight(`${key}.channel_scales`, m.scales, [out]),
      zeroPoints: m.zeroPoints && g.int8Weight(`${key}.channel_zero_points`, m.zeroPoints, [out]),
    };
  }

  /** x [N, in] @ W^T: [N, out]. */
  product(x: string, m: ChannelMatrix): string {
    const g = this.g;
    const a = this.rowCodes(x);
    // com.microsoft MatMulIntegerToFloat: MatMulInteger, Cast and the column scales in one node (its
    // A scale is per tensor or per input feature, so the per-row scale is a Mul after it).
    this.one ??= g.scalar(1);
    const inputs = [a.codes, m.codes, this.one, m.scales, this.zeroPoint()];
    if (m.zeroPoints) inputs.push(m.zeroPoints);
    return g.op("Mul", [g.op("MatMulIntegerToFloat", inputs, {}, MS_DOMAIN), a.scales]);
  }

  /**
   * Rows `ids` of W [rows, in] as float32 [N, in], from the same codes (a tied embedding read from its
   * LM head's codes): a column gather of the transposed codes, widened and scaled.
   */
  rowsOf(ids: string, m: ChannelMatrix): string {
    const g = this.g;
    const cols = g.op("Cast", [g.op("Gather", [m.codes, ids], { axis: 1 })], { to: FLOAT }); // [in, N]
    const zeroed = m.zeroPoints
      ? g.op("Sub", [cols, g.op("Cast", [g.op("Gather", [m.zeroPoints, ids], { axis: 0 })], { to: FLOAT })])
      : cols;
    const scales = g.op("Unsqueeze", [g.op("Gather", [m.scales, ids], { axis: 0 }), g.ints([1])]); // [N, 1]
    return g.op("Mul", [g.op("Transpose", [zeroed], { perm: [1, 0] }), scales]);
  }

  private rowCodes(x: string): RowCodes {
    let r = this.rows.get(x);
    if (!r) {
      const g = this.g;
      // keepdims 0, then Unsqueeze: onnxruntime 1.30 reduces [0, in] with keepdims 1 to [0, in], not
      // [0, 1] (a step whose rows need no logits has none at the LM head).
      const peak = g.op("Unsqueeze", [
        g.op("ReduceMax", [g.op("Abs", [x])], { axes: [1], keepdims: 0 }),
        g.ints([1]),
      ]); // [N, 1]
      // A row of zeros (padding) gets a tiny scale rather than a division by zero.
      const scales = g.op("Max", [g.op("Mul", [peak, g.scalar(1 / 127)]), g.scalar(1e-30)]);
      const codes = g.op("QuantizeLinear", [g.op("Div", [x, scales]), g.scalar(1), this.zeroPoint()]);
      r = { codes, scales };
      this.rows.set(x, r);
    }
    return r;
  }

  /** uint8 128: the activations' zero point. */
  private zeroPoint(): string {
    this.zero128 ??= this.g.uint8Weight("channel_products.zero128", Uint8Array.of(128), []);
    return this.zero128;
  }
}

/** onnx.TensorProto.DataType.FLOAT */
const FLOAT = 1;
