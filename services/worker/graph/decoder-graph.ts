// Builds the ONNX graph of a decoder-only transformer (the Llama family, dense or mixture-of-experts)
// from its normalized config and checkpoint weights.
//
// One run processes S new tokens per sequence given the KV of P earlier ones:
//   inputs   input_ids [B,S] int64, position_ids [B,S] int64, attention_bias [B,1,S,P+S] float
//            (0 where a query may attend, -inf elsewhere: causal, sliding window and padding all live
//            here, so the graph needs no mask logic), past_key_i / past_value_i [B,P,kvH,D]
//   outputs  logits [B,V] of the last position only, present_key_i / present_value_i [B,S,kvH,D]
//            holding only the new tokens' K/V (the caller owns the cache and appends them).
// K/V use a token-major layout [B,T,kvH,D]: a cache of T tokens is a contiguous prefix of its buffer,
// so the caller passes past K/V without copying and appends new tokens at the end.
// Grouped-query attention reshapes Q [B,H,S,D] to [B,kvH,G*S,D] instead of repeating K/V G times.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import { ropeInverseFrequencies } from "../arch/decoder-config.ts";
import type { LayerWeightNames, WeightNames } from "../arch/registry.ts";
import type { Tensor } from "../model/safetensors.ts";
import { GraphBuilder } from "./onnx-builder.ts";

export interface WeightSource {
  has(name: string): boolean;
  read(name: string, expectedShape?: number[]): Tensor;
}

export const pastKeyName = (layer: number) => `past_key_${layer}`;
export const pastValueName = (layer: number) => `past_value_${layer}`;
export const presentKeyName = (layer: number) => `present_key_${layer}`;
export const presentValueName = (layer: number) => `present_value_${layer}`;

export function buildDecoderGraph(
  config: DecoderConfig,
  names: WeightNames,
  weights: WeightSource,
): Uint8Array {
  return new DecoderGraph(config, names, weights).build();
}

class DecoderGraph {
  private readonly g = new GraphBuilder();
  private readonly c: DecoderConfig;
  private readonly names: WeightNames;
  private readonly weights: WeightSource;

  constructor(config: DecoderConfig, names: WeightNames, weights: WeightSource) {
    this.c = config;
    this.names = names;
    this.weights = weights;
  }

  build(): Uint8Array {
    const { g, c } = this;
    const kvDims = ["batch", "past", c.numKvHeads, c.headDim];
    const ids = g.input("input_ids", "int64", ["batch", "seq"]);
    const positions = g.input("position_ids", "int64", ["batch", "seq"]);
    const bias = g.input("attention_bias", "float", ["batch", 1, "seq", "total"]);
    const embed = this.weight(this.names.embed, [c.vocabSize, c.hiddenSize]);
    let h = g.op("Gather", [embed, ids], { axis: 0 });
    const rope = this.rotaryTables(positions);
    for (let i = 0; i < c.numLayers; i++) {
      const pastK = g.input(pastKeyName(i), "float", kvDims);
      const pastV = g.input(pastValueName(i), "float", kvDims);
      h = this.layer(i, h, bias, rope, pastK, pastV);
    }
    const last = g.op("Slice", [h, g.ints([-1]), g.ints([Number.MAX_SAFE_INTEGER]), g.ints([1])]);
    const normed = this.rmsNorm(last, this.names.finalNorm);
    const logits = g.op("MatMul", [normed, this.linearWeight(this.names.lmHead, c.vocabSize, c.hiddenSize)]);
    g.output(g.op("Squeeze", [logits, g.ints([1])]), "logits", "float", ["batch", c.vocabSize]);
    return g.toBytes(c.architecture);
  }

  private layer(i: number, h: string, bias: string, rope: Rope, pastK: string, pastV: string): string {
    const n = this.names.layer(i);
    const attn = this.attention(i, n, this.rmsNorm(h, n.inputNorm), bias, rope, pastK, pastV);
    const h2 = this.g.op("Add", [h, attn]);
    const x = this.rmsNorm(h2, n.postAttentionNorm);
    return this.g.op("Add", [h2, n.moe ? this.moe(n, x) : this.mlp(n, x)]);
  }

  private attention(
    i: number,
    n: LayerWeightNames,
    x: string,
    bias: string,
    rope: Rope,
    pastK: string,
    pastV: string,
  ): string {
    const { g, c } = this;
    const { numHeads: H, numKvHeads: KV, headDim: D } = c;
    const project = (w: string, b: string, heads: number) => {
      let y = g.op("MatMul", [x, this.linearWeight(w, heads * D, c.hiddenSize)]);
      if (c.qkvBias) y = g.op("Add", [y, this.weight(b, [heads * D])]);
      return g.op("Reshape", [y, g.ints([0, 0, heads, D])]);
    };
    const q = this.applyRope(project(n.q, n.qBias, H), rope);
    const k = this.applyRope(project(n.k, n.kBias, KV), rope);
    const v = project(n.v, n.vBias, KV);
    g.output(k, presentKeyName(i), "float", ["batch", "seq", KV, D]);
    g.output(v, presentValueName(i), "float", ["batch", "seq", KV, D]);
    const keys = g.op("Concat", [pastK, k], { axis: 1 });
    const values = g.op("Concat", [pastV, v], { axis: 1 });
    const kT = g.op("Transpose", [keys], { perm: [0, 2, 3, 1] }); // [B,KV,D,T]
    const vT = g.op("Transpose", [values], { perm: [0, 2, 1, 3] }); // [B,KV,T,D]
    const qT = g.op("Transpose", [q], { perm: [0, 2, 1, 3] }); // [B,H,S,D]
    const qGrouped = g.op("Reshape", [qT, g.ints([0, KV, -1, D])]); // [B,KV,G*S,D]
    const raw = g.op("MatMul", [qGrouped, kT]); // [B,KV,G*S,T]
    const scaled = g.op("Mul", [raw, g.scalar(1 / Math.sqrt(D))]);
    const perHead = g.op("Reshape", [scaled, g.ints([0, H, -1, 0])]); // [B,H,S,T]
    const probs = g.op("Softmax", [g.op("Add", [perHead, bias])], { axis: -1 });
    const ctx = g.op("MatMul", [g.op("Reshape", [probs, g.ints([0, KV, -1, 0])]), vT]); // [B,KV,G*S,D]
    const ctxHeads = g.op("Transpose", [g.op("Reshape", [ctx, g.ints([0, H, -1, D])])], {
      perm: [0, 2, 1, 3],
    });
    const merged = g.op("Reshape", [ctxHeads, g.ints([0, 0, H * D])]);
    return g.op("MatMul", [merged, this.linearWeight(n.o, c.hiddenSize, H * D)]);
  }

  private mlp(n: LayerWeightNames, x: string): string {
    const { c } = this;
    const mlp = n.mlp!;
    return this.swiglu(x, mlp.gate, mlp.up, mlp.down, c.intermediateSize);
  }

  /** down(silu(gate(x)) * up(x)) */
  private swiglu(x: string, gate: string, up: string, down: string, inner: number): string {
    const { g, c } = this;
    const gx = g.op("MatMul", [x, this.linearWeight(gate, inner, c.hiddenSize)]);
    const ux = g.op("MatMul", [x, this.linearWeight(up, inner, c.hiddenSize)]);
    const act = g.op("Mul", [g.op("Mul", [gx, g.op("Sigmoid", [gx])]), ux]);
    return g.op("MatMul", [act, this.linearWeight(down, c.hiddenSize, inner)]);
  }

  /**
   * Sparse mixture of experts: softmax over the router logits, keep the top k, renormalize, and
   * scatter the weights back to a dense [B,S,E] map (zero for unpicked experts). Every expert runs on
   * every token and is weighted by that map: exact, and cheap at the sizes we run on CPU.
   */
  private moe(n: LayerWeightNames, x: string): string {
    const { g, c } = this;
    const moe = c.moe!;
    const names = n.moe!;
    const router = g.op("MatMul", [x, this.linearWeight(names.router, moe.numExperts, c.hiddenSize)]);
    const probs = g.op("Softmax", [router], { axis: -1 });
    const [top, idx] = g.opN("TopK", [probs, g.ints([moe.topK])], 2, { axis: -1, largest: 1, sorted: 1 });
    let weights = top!;
    if (moe.normalizeTopK)
      weights = g.op("Div", [weights, g.op("ReduceSum", [weights, g.ints([-1])], { keepdims: 1 })]);
    const zeros = g.op("Mul", [probs, g.scalar(0)]);
    const dense = g.op("ScatterElements", [zeros, idx!, weights], { axis: -1 });
    let out: string | undefined;
    for (let e = 0; e < moe.numExperts; e++) {
      const ex = names.expert(e);
      const y = this.swiglu(x, ex.gate, ex.up, ex.down, c.intermediateSize);
      const w = g.op("Slice", [dense, g.ints([e]), g.ints([e + 1]), g.ints([-1])]);
      const weighted = g.op("Mul", [y, w]);
      out = out === undefined ? weighted : g.op("Add", [out, weighted]);
    }
    return out!;
  }

  /** x * rsqrt(mean(x^2) + eps) * weight, in float32 as transformers computes it. */
  private rmsNorm(x: string, weightName: string): string {
    const { g, c } = this;
    const variance = g.op("ReduceMean", [g.op("Mul", [x, x])], { axes: [-1], keepdims: 1 });
    const inv = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [variance, g.scalar(c.rmsNormEps)])])]);
    return g.op("Mul", [g.op("Mul", [x, inv]), this.weight(weightName, [c.hiddenSize])]);
  }

  /** cos and sin of position * inv_freq, duplicated to head_dim and shaped [B,S,1,D] for broadcasting. */
  private rotaryTables(positions: string): Rope {
    const { g, c } = this;
    const inv = g.weight("rope_inv_freq", ropeInverseFrequencies(c), [1, 1, c.headDim / 2]);
    const pos = g.op("Unsqueeze", [g.op("Cast", [positions], { to: 1 }), g.ints([2])]); // [B,S,1]
    const freqs = g.op("Mul", [pos, inv]);
    const emb = g.op("Concat", [freqs, freqs], { axis: -1 });
    const axis = g.ints([2]);
    return {
      cos: g.op("Unsqueeze", [g.op("Cos", [emb]), axis]),
      sin: g.op("Unsqueeze", [g.op("Sin", [emb]), axis]),
    };
  }

  /** x * cos + rotate_half(x) * sin, where rotate_half(x) = [-x2, x1] over the two halves of head_dim. */
  private applyRope(x: string, rope: Rope): string {
    const { g } = this;
    const [x1, x2] = g.opN("Split", [x], 2, { axis: -1 });
    const rotated = g.op("Concat", [g.op("Neg", [x2!]), x1!], { axis: -1 });
    return g.op("Add", [g.op("Mul", [x, rope.cos]), g.op("Mul", [rotated, rope.sin])]);
  }

  /** A checkpoint tensor as an initializer, added once however often it is used (tied embeddings). */
  private weight(name: string, shape: number[]): string {
    if (!this.added.has(name))
      this.added.add(this.g.weight(name, this.weights.read(name, shape).data, shape));
    return name;
  }

  private readonly added = new Set<string>();

  /** A [out, in] checkpoint matrix used as x @ W^T: the Transpose is folded by onnxruntime at load. */
  private linearWeight(name: string, out: number, inDim: number): string {
    const key = `${name}.T`;
    if (!this.transposed.has(key)) {
      this.transposed.set(key, this.g.op("Transpose", [this.weight(name, [out, inDim])], { perm: [1, 0] }));
    }
    return this.transposed.get(key)!;
  }

  private readonly transposed = new Map<string, string>();
}

interface Rope {
  cos: string;
  sin: string;
}
