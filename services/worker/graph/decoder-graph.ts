// Builds the ONNX graph of a decoder-only transformer (the Llama family, dense or mixture-of-experts)
// from its normalized config and checkpoint weights. One run is one engine step over a batch of
// sequences with a paged KV cache; see docs/engine-memory-layout.md for the layout and why.
//
//   inputs   input_ids, position_ids [N] int64: the step's N new tokens, sequence after sequence
//            key_cache_i, value_cache_i [slots, kvH, D]: the whole KV pool of layer i (passed without a
//            copy; slot = block * block_size + offset)
//            per attention group g in (decode, prefill):
//              g_query_index [B,S]: flat index of each sequence's new tokens (padded)
//              g_past_index [B,P]: pool slots of each sequence's cached tokens (padded)
//              g_bias [B,1,S,P+S]: 0 where a query may attend, -inf elsewhere (causal, window, padding)
//            unpad_index [N]: where each token's attention output sits in the groups' padded outputs
//            logits_index [L]: the tokens whose next-token logits are wanted
//   outputs  logits [L,V]; new_key_i, new_value_i [N,kvH,D]: the new tokens' K/V, which the caller
//            writes into the pool (graph outputs stay small: no full cache is ever copied out).
// Decode sequences (one new token) and prefill chunks form separate groups so a long chunk does not
// pad every decode sequence to its length. Linear layers run on the flat [N, hidden] batch.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import { ropeInverseFrequencies } from "../arch/decoder-config.ts";
import type { LayerWeightNames, WeightNames } from "../arch/registry.ts";
import type { Tensor } from "../model/safetensors.ts";
import type { AttentionBackend } from "./attention-backend.ts";
import { GraphBuilder } from "./onnx-builder.ts";

export interface WeightSource {
  has(name: string): boolean;
  read(name: string, expectedShape?: number[]): Tensor;
}

export const keyCacheName = (layer: number) => `key_cache_${layer}`;
export const valueCacheName = (layer: number) => `value_cache_${layer}`;
export const newKeyName = (layer: number) => `new_key_${layer}`;
export const newValueName = (layer: number) => `new_value_${layer}`;
export const ATTENTION_GROUPS = ["decode", "prefill"] as const;
export type AttentionGroup = (typeof ATTENTION_GROUPS)[number];

export function buildDecoderGraph(
  config: DecoderConfig,
  names: WeightNames,
  weights: WeightSource,
  attention: AttentionBackend,
): Uint8Array {
  return new DecoderGraph(config, names, weights, attention).build();
}

interface GroupInputs {
  queryIndex: string;
  pastIndex: string;
  bias: string;
}

class DecoderGraph {
  private readonly g = new GraphBuilder();
  private readonly c: DecoderConfig;
  private readonly names: WeightNames;
  private readonly weights: WeightSource;
  private readonly attentionBackend: AttentionBackend;
  private readonly groups = new Map<AttentionGroup, GroupInputs>();

  constructor(config: DecoderConfig, names: WeightNames, weights: WeightSource, attention: AttentionBackend) {
    this.c = config;
    this.names = names;
    this.weights = weights;
    this.attentionBackend = attention;
  }

  build(): Uint8Array {
    const { g, c } = this;
    const ids = g.input("input_ids", "int64", ["tokens"]);
    const positions = g.input("position_ids", "int64", ["tokens"]);
    for (const group of ATTENTION_GROUPS) {
      this.groups.set(group, {
        queryIndex: g.input(`${group}_query_index`, "int64", [`${group}_batch`, `${group}_queries`]),
        pastIndex: g.input(`${group}_past_index`, "int64", [`${group}_batch`, `${group}_past`]),
        bias: g.input(`${group}_bias`, "float", [`${group}_batch`, 1, `${group}_queries`, `${group}_keys`]),
      });
    }
    const unpad = g.input("unpad_index", "int64", ["tokens"]);
    const logitsIndex = g.input("logits_index", "int64", ["logit_rows"]);
    const embed = this.weight(this.names.embed, [c.vocabSize, c.hiddenSize]);
    let h = g.op("Gather", [embed, ids], { axis: 0 }); // [N, hidden]
    const rope = this.rotaryTables(positions);
    for (let i = 0; i < c.numLayers; i++) h = this.layer(i, h, rope, unpad);
    const last = g.op("Gather", [h, logitsIndex], { axis: 0 });
    const normed = this.rmsNorm(last, this.names.finalNorm);
    const logits = g.op("MatMul", [normed, this.linearWeight(this.names.lmHead, c.vocabSize, c.hiddenSize)]);
    g.output(logits, "logits", "float", ["logit_rows", c.vocabSize]);
    return g.toBytes(c.architecture);
  }

  private layer(i: number, h: string, rope: Rope, unpad: string): string {
    const n = this.names.layer(i);
    const attn = this.attention(i, n, this.rmsNorm(h, n.inputNorm), rope, unpad);
    const h2 = this.g.op("Add", [h, attn]);
    const x = this.rmsNorm(h2, n.postAttentionNorm);
    return this.g.op("Add", [h2, n.moe ? this.moe(n, x) : this.mlp(n, x)]);
  }

  private attention(i: number, n: LayerWeightNames, x: string, rope: Rope, unpad: string): string {
    const { g, c } = this;
    const { numHeads: H, numKvHeads: KV, headDim: D } = c;
    const project = (w: string, b: string, heads: number) => {
      let y = g.op("MatMul", [x, this.linearWeight(w, heads * D, c.hiddenSize)]);
      if (c.qkvBias) y = g.op("Add", [y, this.weight(b, [heads * D])]);
      return g.op("Reshape", [y, g.ints([-1, heads, D])]); // [N, heads, D]
    };
    const q = this.applyRope(project(n.q, n.qBias, H), rope);
    const k = this.applyRope(project(n.k, n.kBias, KV), rope);
    const v = project(n.v, n.vBias, KV);
    g.output(k, newKeyName(i), "float", ["tokens", KV, D]);
    g.output(v, newValueName(i), "float", ["tokens", KV, D]);
    const keyCache = g.input(keyCacheName(i), "float", ["slots", KV, D]);
    const valueCache = g.input(valueCacheName(i), "float", ["slots", KV, D]);
    const outputs = ATTENTION_GROUPS.map((group) => {
      const inputs = this.groups.get(group)!;
      const gather = (src: string, index: string) => g.op("Gather", [src, index], { axis: 0 });
      return this.attentionBackend.build(g, c, group, {
        query: gather(q, inputs.queryIndex), // [B,S,H,D]
        newKey: gather(k, inputs.queryIndex), // [B,S,KV,D]
        newValue: gather(v, inputs.queryIndex),
        pastKey: gather(keyCache, inputs.pastIndex), // [B,P,KV,D]
        pastValue: gather(valueCache, inputs.pastIndex),
        bias: inputs.bias,
      });
    });
    const merged = g.op("Gather", [g.op("Concat", outputs, { axis: 0 }), unpad], { axis: 0 }); // [N, H*D]
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

  /** cos and sin of position * inv_freq, duplicated to head_dim and shaped [N,1,D] for broadcasting. */
  private rotaryTables(positions: string): Rope {
    const { g, c } = this;
    const inv = g.weight("rope_inv_freq", ropeInverseFrequencies(c), [1, c.headDim / 2]);
    const pos = g.op("Unsqueeze", [g.op("Cast", [positions], { to: 1 }), g.ints([1])]); // [N,1]
    const freqs = g.op("Mul", [pos, inv]);
    const emb = g.op("Concat", [freqs, freqs], { axis: -1 });
    const axis = g.ints([1]);
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
