// Checkpoint weights in a graph: each tensor (or a tensor-parallel rank's slice of it) becomes one
// initializer, added once however often it is used (tied embeddings), and the products y = x @ W^T that
// read the [out, in] matrices. Matrices stay in the dtype the checkpoint stores them in, so a float16 or
// bfloat16 checkpoint keeps its own size in memory; vectors (norm weights, biases) are widened to
// float32 at load, which costs next to nothing.
//
// Quantized (`--quantization int8|int4`, or a GPTQ/AWQ checkpoint's packed matrices): MatMulNBits over
// block-quantized codes, graph-weights-quantized.ts; per-channel int8 codes (int8's default):
// MatMulIntegerToFloat, graph-weights-channel.ts.
// float32 matrix: MatMul(x, Transpose(W)); onnxruntime folds the Transpose at load and prepacks W.
// 16-bit matrix:  Gemm(x, Cast(W'), transB=1), W' = Reshape(W, [out, in] + 0 * tokens(x)): the product
//   computes in float32 from a float32 copy of one matrix that lives only for that product.
// Why so (onnxruntime-node 1.30, CPU EP, x86-64 with AVX-512 and AVX512_BF16 but no AVX512_FP16/AMX;
// measured on a 12-layer stack of [768, 768] and [768, 2048] projections, batch 1):
// - The CPU EP has no float16 or bfloat16 MatMul/Gemm kernel on x86: given one, onnxruntime inserts a
//   Cast to float32 before it and folds the Cast of the weight into a float32 initializer at load,
//   so memory doubles. A plain Cast(W) before the product is folded the same way (constant folding,
//   and at level "all" even with ConstantFolding disabled).
// - An unfoldable Cast(W) without a data dependency runs before everything else (onnxruntime orders
//   nodes without inputs first), so most float32 copies are alive at once: the arena grew by 70% of
//   the float32 weights, and a step took 2.4x float32's (each copy had left the cache before its
//   product read it). The Reshape through the runtime token count makes each Cast wait for its
//   product's input and keeps the graph foldable everywhere else, with the default session options.
// - Result (the base preset, `npm run bench -- memory`): the session holds 1.01-1.03x the checkpoint
//   after load (not 2x), its arena the float32 copy of the largest matrix; batch-1 decode at 0.87-0.92x
//   float32's tokens per CPU-second, prefill at 0.90-0.93x. float16 and bfloat16 Casts cost the same,
//   so bfloat16 stays bfloat16: no conversion to float16, whose range it exceeds, and no rounding.
import type { WeightDtype } from "../model/dtype.ts";
import { blockWise, isPerChannel } from "../model/quantize-blocks.ts";
import type { TensorSlice } from "../model/tensor-slice.ts";
import type { WeightSource } from "./graph-names.ts";
import { type ChannelMatrix, ChannelProducts } from "./graph-weights-channel.ts";
import {
  addNBits,
  addQuantized,
  type NBitsMatrix,
  quantizedProduct,
  quantizedRows,
} from "./graph-weights-quantized.ts";
import type { GraphBuilder } from "./onnx-builder.ts";

/** A range of rows (an axis-0 slice) or any slice of a tensor. */
export type WeightSlice = TensorSlice | { start: number; end: number };

export class GraphWeights {
  private readonly g: GraphBuilder;
  private readonly source: WeightSource;
  /** Initializer name -> its dtype (float32 for vectors). */
  private readonly added = new Map<string, WeightDtype>();
  private readonly transposed = new Map<string, string>();
  /** Matrices run by MatMulNBits by key, null for a float one (graph-weights-quantized.ts). */
  private readonly quantized = new Map<string, NBitsMatrix | null>();
  /** Matrices run by MatMulIntegerToFloat (per-channel int8) by key. */
  private readonly channels = new Map<string, ChannelMatrix>();
  private readonly channelProducts: ChannelProducts;
  /** Per product input: a zero that depends on its token count. */
  private readonly tokenZero = new Map<string, string>();

  constructor(g: GraphBuilder, source: WeightSource) {
    this.g = g;
    this.source = source;
    this.channelProducts = new ChannelProducts(g);
  }

  /** A vector (norm weight, bias) or its slice, widened to float32. */
  vector(name: string, shape: number[], slice?: WeightSlice): string {
    const key = keyOf(name, slice);
    if (!this.added.has(key)) {
      const t = slice ? this.source.readSlice(name, shape, asSlice(slice)) : this.source.read(name, shape);
      this.added.set(this.g.weight(key, t.data, t.shape), "F32");
    }
    return key;
  }

  /**
   * Rows `ids` of an embedding table [vocab, hidden], as float32. A table that is also the LM head
   * (`tied`) and quantized for it is read from the head's codes (quantizedRows), not kept in floats
   * beside them: a float table next to its own quantized copy made int4 weights larger than float32's
   * at a large vocabulary.
   */
  embed(ids: string, name: string, shape: [number, number], tied = false): string {
    const channel = tied ? this.channel(name, shape[0], shape[1]) : undefined;
    if (channel) return this.channelProducts.rowsOf(ids, channel);
    const codes = tied ? this.nbits(name, shape[0], shape[1]) : undefined;
    const quantized = codes && quantizedRows(this.g, ids, codes);
    if (quantized) return quantized;
    const table = this.matrix(name, shape);
    const rows = this.g.op("Gather", [table, ids], { axis: 0 });
    return this.added.get(table) === "F32" ? rows : this.g.op("Cast", [rows], { to: FLOAT });
  }

  /**
   * x [N, in] @ W^T for a checkpoint matrix W [out, in]: [N, out]. `slice`: a range of rows (output
   * features), or {axis: 1} for columns (input features).
   */
  linear(x: string, name: string, out: number, inDim: number, slice?: WeightSlice): string {
    const c = this.channel(name, out, inDim, slice);
    if (c) return this.channelProducts.product(x, c);
    const m = this.nbits(name, out, inDim, slice);
    if (m) return quantizedProduct(this.g, x, m, this.source.nbitsAccuracyLevel);
    const w = this.matrix(name, [out, inDim], slice);
    if (this.added.get(w) === "F32") return this.g.op("MatMul", [x, this.transposeOf(w)]);
    const shape = sliceShape([out, inDim], slice);
    const target = this.g.op("Add", [this.g.ints(shape), this.zeroOf(x)]);
    const wide = this.g.op("Cast", [this.g.op("Reshape", [w, target])], { to: FLOAT });
    return this.g.op("Gemm", [x, wide], { transB: 1 });
  }

  /**
   * The matrix as MatMulNBits initializers: a GPTQ/AWQ checkpoint's packed codes as stored, else with
   * `--quantization` quantized at load; undefined for a float product. A pre-quantized checkpoint's
   * float matrices (an unquantized lm_head) follow `--quantization` like any float checkpoint's.
   */
  private nbits(name: string, out: number, inDim: number, slice?: WeightSlice): NBitsMatrix | undefined {
    const key = `${keyOf(name, slice)}#q`;
    const known = this.quantized.get(key);
    if (known !== undefined) return known ?? undefined;
    const s = slice && asSlice(slice);
    const repacked = this.source.readPrequantized?.(name, [out, inDim], s);
    const q = blockWise(this.source.quantization);
    const m = repacked
      ? addNBits(this.g, repacked, key)
      : q && addQuantized(this.g, this.source, q, name, [out, inDim], key, s);
    this.quantized.set(key, m ?? null);
    return m;
  }

  /**
   * The matrix as per-channel int8 codes when `--quantization` says so (never for a GPTQ/AWQ
   * checkpoint: WeightStore.open refuses --quantization for one).
   */
  private channel(name: string, out: number, inDim: number, slice?: WeightSlice): ChannelMatrix | undefined {
    const q = this.source.quantization;
    if (!q || !isPerChannel(q)) return undefined;
    const key = `${keyOf(name, slice)}#c`;
    const known = this.channels.get(key);
    if (known) return known;
    const m = this.channelProducts.add(this.source, q, name, [out, inDim], key, slice && asSlice(slice));
    this.channels.set(key, m);
    return m;
  }

  /** A matrix (or its slice) as an initializer in its stored dtype. */
  private matrix(name: string, shape: number[], slice?: WeightSlice): string {
    const key = keyOf(name, slice);
    if (!this.added.has(key)) {
      const t = this.source.readStored(name, shape, slice && asSlice(slice));
      this.added.set(this.g.storedWeight(key, t.dtype, t.bytes, t.shape), t.dtype);
    }
    return key;
  }

  private transposeOf(w: string): string {
    let t = this.transposed.get(w);
    if (!t) {
      t = this.g.op("Transpose", [w], { perm: [1, 0] });
      this.transposed.set(w, t);
    }
    return t;
  }

  /** 0 * (x's token count), [1] int64: computed at run time, so nothing fed by it is folded at load. */
  private zeroOf(x: string): string {
    let zero = this.tokenZero.get(x);
    if (!zero) {
      const tokens = this.g.op("Shape", [x], { start: 0, end: 1 });
      zero = this.g.op("Mul", [tokens, this.g.ints([0], [])]);
      this.tokenZero.set(x, zero);
    }
    return zero;
  }
}

/** onnx.TensorProto.DataType.FLOAT */
const FLOAT = 1;

function asSlice(s: WeightSlice): TensorSlice {
  return { axis: "axis" in s ? s.axis : 0, start: s.start, end: s.end };
}

function keyOf(name: string, slice?: WeightSlice): string {
  if (!slice) return name;
  const s = asSlice(slice);
  return `${name}[${s.axis}:${s.start}:${s.end}]`;
}

function sliceShape(shape: number[], slice?: WeightSlice): number[] {
  if (!slice) return shape;
  const s = asSlice(slice);
  const out = [...shape];
  out[s.axis] = s.end - s.start;
  return out;
}
