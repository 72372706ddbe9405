// The building blocks of a decoder graph (embedding, attention over the paged KV pool, the MLP or the
// experts, RMSNorm, RoPE, the LM head), from which shard-graph.ts builds every graph: the whole model's
// (a single process) and each segment of a parallel shard's. With a tensor shard, every projection reads only the
// rank's slice of its weight (Megatron-style): q/k/v, gate/up (each expert's too) and the LM head by
// rows, o_proj and down_proj by columns, so attention and the MLP each end in a partial sum that an
// all-reduce completes; the LM head yields a slice of the vocabulary.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { LayerWeightNames, WeightNames } from "../arch/registry.ts";
import { ropeAttentionFactor, ropeDependsOnLength, ropeInverseFrequencies } from "../arch/rope.ts";
import type { AttentionBackend } from "./attention-backend.ts";
import {
  ATTENTION_GROUPS,
  type AttentionGroup,
  keyCacheName,
  newKeyName,
  newValueName,
  ROPE_INV_FREQ,
  valueCacheName,
  type WeightSource,
} from "./graph-names.ts";
import { GraphWeights, type WeightSlice } from "./graph-weights.ts";
import { type GraphBuilder, MS_DOMAIN } from "./onnx-builder.ts";
import { shardRanges, type TensorShard } from "./tensor-shard.ts";

export { shardRanges, type TensorShard } from "./tensor-shard.ts";

/** Each token's rotation, as onnxruntime's RotaryEmbedding takes it (applyRope). */
export interface Rope {
  /** [N, D/2] cos and sin of each token's position times the inverse frequencies (one row per token). */
  cos: string;
  sin: string;
  /** [1, N]: 0..N-1, token i's row of the tables. */
  rows: string;
}

interface GroupInputs {
  queryIndex: string;
  /** [B,KV,P] row of each cached key of each KV head in the pool viewed as [slots*KV, D]. */
  pastRows: string;
  bias: string;
}

export interface DecoderOpsParts {
  config: DecoderConfig;
  names: WeightNames;
  weights: WeightSource;
  attention: AttentionBackend;
  /** Unset: the whole model. */
  shard?: TensorShard | undefined;
}

export class DecoderOps {
  readonly g: GraphBuilder;
  private readonly c: DecoderConfig;
  private readonly names: WeightNames;
  /** The checkpoint's tensors in this graph (initializers and the products that read them). */
  private readonly w: GraphWeights;
  private readonly attentionBackend: AttentionBackend;
  private readonly shard: TensorShard | undefined;
  private readonly ranges: ReturnType<typeof shardRanges>;
  /** The config the attention backend sees: this rank's heads. */
  private readonly localConfig: DecoderConfig;
  private readonly groups = new Map<AttentionGroup, GroupInputs>();

  constructor(g: GraphBuilder, parts: DecoderOpsParts) {
    this.g = g;
    this.c = parts.config;
    this.names = parts.names;
    this.w = new GraphWeights(g, parts.weights);
    this.attentionBackend = parts.attention;
    this.shard = parts.shard;
    this.ranges = shardRanges(parts.config, parts.shard);
    this.localConfig = { ...parts.config, numHeads: this.ranges.heads, numKvHeads: this.ranges.kvHeads };
  }

  /** Declares the index and mask inputs of both attention groups. */
  attentionGroupInputs(): void {
    const { g } = this;
    for (const group of ATTENTION_GROUPS) {
      const pastIndex = g.input(`${group}_past_index`, "int64", [`${group}_batch`, `${group}_past`]);
      this.groups.set(group, {
        queryIndex: g.input(`${group}_query_index`, "int64", [`${group}_batch`, `${group}_queries`]),
        pastRows: this.pastRows(pastIndex),
        bias: g.input(`${group}_bias`, "float", [`${group}_batch`, 1, `${group}_queries`, `${group}_keys`]),
      });
    }
  }

  /**
   * [B,P] pool slots -> [B,KV,P] rows of the pool viewed as [slots*KV, D]: one Gather then reads the
   * cached keys (or values) head-major, [B,KV,P,D], as attention multiplies them, where gathering
   * [B,P,KV,D] slots took a transposed copy of each (and onnx-ops a third, concatenated with the new
   * tokens'). Computed once per step for all layers.
   */
  private pastRows(pastIndex: string): string {
    const { g } = this;
    const KV = this.ranges.kvHeads;
    const slots = g.op("Unsqueeze", [pastIndex, g.ints([1])]); // [B,1,P]
    const heads = g.ints(
      Array.from({ length: KV }, (_, h) => h),
      [1, KV, 1],
    );
    return g.op("Add", [g.op("Mul", [slots, g.ints([KV], [])]), heads]);
  }

  /** [N] token ids -> [N, hidden]. The table is whole on every rank (a Gather reads N rows of it). */
  embed(ids: string): string {
    const tied = this.names.embed === this.names.lmHead;
    return this.w.embed(ids, this.names.embed, [this.c.vocabSize, this.c.hiddenSize], tied);
  }

  /** One whole decoder layer: h + attention, then + MLP (unsharded graphs only). */
  layer(i: number, h: string, rope: Rope, unpad: string): string {
    const h2 = this.g.op("Add", [h, this.attentionBlock(i, h, rope, unpad)]);
    return this.g.op("Add", [h2, this.mlpBlock(i, h2)]);
  }

  /** Input norm and attention of layer i: [N, hidden] (a partial sum on a tensor shard). */
  attentionBlock(i: number, h: string, rope: Rope, unpad: string): string {
    const n = this.names.layer(i);
    return this.attention(i, n, this.rmsNorm(h, n.inputNorm), rope, unpad);
  }

  /** Post-attention norm and MLP (or experts) of layer i: [N, hidden] (a partial sum on a tensor shard). */
  mlpBlock(i: number, h: string): string {
    const n = this.names.layer(i);
    const x = this.rmsNorm(h, n.postAttentionNorm);
    return n.moe ? this.moe(n, x) : this.mlp(n, x);
  }

  /** The rows `logitsIndex` of h through the final norm and the LM head: [L, V] (this rank's vocabulary slice). */
  head(h: string, logitsIndex: string): string {
    const { g, c } = this;
    const last = g.op("Gather", [h, logitsIndex], { axis: 0 });
    const normed = this.rmsNorm(last, this.names.finalNorm);
    const rows = this.shard ? this.ranges.vocab : undefined;
    return this.w.linear(normed, this.names.lmHead, c.vocabSize, c.hiddenSize, rows);
  }

  private attention(i: number, n: LayerWeightNames, x: string, rope: Rope, unpad: string): string {
    const { g, c } = this;
    const { heads: H, kvHeads: KV, q: qRows, kv: kvRows } = this.ranges;
    const D = c.headDim;
    const project = (w: string, b: string, heads: number, rows: WeightSlice) => {
      const slice = this.shard ? rows : undefined;
      const y = this.w.linear(x, w, heads * this.shardSize * D, c.hiddenSize, slice);
      return c.qkvBias ? g.op("Add", [y, this.w.vector(b, [heads * this.shardSize * D], slice)]) : y; // [N, heads*D]
    };
    const q = this.applyRope(project(n.q, n.qBias, H, qRows), H, rope);
    const k = this.applyRope(project(n.k, n.kBias, KV, kvRows), KV, rope);
    const v = g.op("Reshape", [project(n.v, n.vBias, KV, kvRows), g.ints([-1, KV, D])]); // [N, KV, D]
    g.output(k, newKeyName(i), "float", ["tokens", KV, D]);
    g.output(v, newValueName(i), "float", ["tokens", KV, D]);
    const keyCache = g.input(keyCacheName(i), "float", ["slots", KV, D]);
    const valueCache = g.input(valueCacheName(i), "float", ["slots", KV, D]);
    const outputs = ATTENTION_GROUPS.map((group) => {
      const inputs = this.groups.get(group)!;
      const gather = (src: string, index: string) => g.op("Gather", [src, index], { axis: 0 });
      const rows = (cache: string) => g.op("Reshape", [cache, g.ints([-1, D])]); // [slots*KV, D]
      // Gathered only where the backend reads them (onnx-ops gathers the decode group's in halves).
      let pastKey: string | undefined;
      let pastValue: string | undefined;
      return this.attentionBackend.build(g, this.localConfig, group, {
        query: gather(q, inputs.queryIndex), // [B,S,H,D]
        newKey: gather(k, inputs.queryIndex), // [B,S,KV,D]
        newValue: gather(v, inputs.queryIndex),
        get pastKey() {
          pastKey ??= gather(rows(keyCache), inputs.pastRows); // [B,KV,P,D]
          return pastKey;
        },
        get pastValue() {
          pastValue ??= gather(rows(valueCache), inputs.pastRows);
          return pastValue;
        },
        pastRows: inputs.pastRows,
        bias: inputs.bias,
        keyCache,
        valueCache,
      });
    });
    const merged = g.op("Gather", [g.op("Concat", outputs, { axis: 0 }), unpad], { axis: 0 }); // [N, H*D]
    const oColumns = this.shard ? { axis: 1 as const, ...qRows } : undefined;
    return this.w.linear(merged, n.o, c.hiddenSize, c.numHeads * D, oColumns);
  }

  private get shardSize(): number {
    return this.shard?.size ?? 1;
  }

  private mlp(n: LayerWeightNames, x: string): string {
    const mlp = n.mlp!;
    return this.swiglu(x, mlp.gate, mlp.up, mlp.down);
  }

  /** down(silu(gate(x)) * up(x)); a shard holds a range of the intermediate columns. */
  private swiglu(x: string, gate: string, up: string, down: string): string {
    const { g, c } = this;
    const I = c.intermediateSize;
    const rows = this.shard ? this.ranges.inner : undefined;
    const columns = rows && { axis: 1 as const, ...rows };
    const gx = this.w.linear(x, gate, I, c.hiddenSize, rows);
    const ux = this.w.linear(x, up, I, c.hiddenSize, rows);
    const act = g.op("Mul", [g.op("Mul", [gx, g.op("Sigmoid", [gx])]), ux]);
    return this.w.linear(act, down, c.hiddenSize, I, columns);
  }

  /**
   * Sparse mixture of experts: softmax over the router logits, keep the top k, renormalize, and
   * scatter the weights back to a dense [B,S,E] map (zero for unpicked experts). Every expert runs on
   * every token and is weighted by that map: exact, and cheap at the sizes we run on CPU. The router is
   * whole on every rank; each expert is sliced like a dense MLP.
   */
  private moe(n: LayerWeightNames, x: string): string {
    const { g, c } = this;
    const moe = c.moe!;
    const names = n.moe!;
    const router = this.w.linear(x, names.router, moe.numExperts, c.hiddenSize);
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
      const y = this.swiglu(x, ex.gate, ex.up, ex.down);
      const w = g.op("Slice", [dense, g.ints([e]), g.ints([e + 1]), g.ints([-1])]);
      const weighted = g.op("Mul", [y, w]);
      out = out === undefined ? weighted : g.op("Add", [out, weighted]);
    }
    return out!;
  }

  /**
   * x * rsqrt(mean(x^2) + eps) * weight, in float32 as transformers computes it, as one node:
   * onnxruntime's SimplifiedLayerNormalization (a contrib op registered in the ONNX domain), where the
   * seven elementwise nodes it replaces each paid a kernel's fixed cost. With applyRope's fusion, a
   * batch-1 decode step of the base preset runs ~950 nodes instead of ~1,200 and takes 12-16% less CPU
   * (docs/engine-memory-layout.md, "One step"). Logits equal the unfused graph's to 1e-5 in float32.
   */
  private rmsNorm(x: string, weightName: string): string {
    const { g, c } = this;
    return g.op("SimplifiedLayerNormalization", [x, this.w.vector(weightName, [c.hiddenSize])], {
      axis: -1,
      epsilon: { float: c.rmsNormEps },
      stash_type: 1,
    });
  }

  /**
   * cos and sin of position * inv_freq (times yarn's attention factor), [N, D/2], one row per token,
   * with the rows' indices [1, N]: RotaryEmbedding (applyRope) reads token i's row i, so the tables
   * hold only this step's tokens whatever the context length. The inverse frequencies are a constant
   * [1, D/2] table, or with dynamic rope, whose base depends on the sequence's length, an input
   * [N, D/2] with each token's own row (runtime/step-inputs.ts fills it per sequence).
   */
  rotaryTables(positions: string): Rope {
    const { g, c } = this;
    const half = c.headDim / 2;
    const inv = ropeDependsOnLength(c)
      ? g.input(ROPE_INV_FREQ, "float", ["tokens", half])
      : g.weight("rope_inv_freq", ropeInverseFrequencies(c), [1, half]);
    const pos = g.op("Unsqueeze", [g.op("Cast", [positions], { to: 1 }), g.ints([1])]); // [N,1]
    const freqs = g.op("Mul", [pos, inv]); // [N, D/2]
    const factor = ropeAttentionFactor(c);
    const scaled = (t: string) => (factor === 1 ? t : g.op("Mul", [t, g.scalar(factor)]));
    const count = g.op("Size", [positions]);
    const rows = g.op("Range", [g.ints([0], []), count, g.ints([1], [])]);
    return {
      cos: scaled(g.op("Cos", [freqs])),
      sin: scaled(g.op("Sin", [freqs])),
      rows: g.op("Unsqueeze", [rows, g.ints([0])]),
    };
  }

  /**
   * x * cos + rotate_half(x) * sin, where rotate_half(x) = [-x2, x1] over the two halves of head_dim,
   * for x [N, heads*D] -> [N, heads, D]: onnxruntime's RotaryEmbedding (com.microsoft, not interleaved)
   * on x seen as one sequence of N tokens, each reading its own row of the tables. One node where the
   * split, negation, join, two products and a sum took six (see rmsNorm for why that counts).
   */
  private applyRope(x: string, heads: number, rope: Rope): string {
    const { g, c } = this;
    const seq = g.op("Reshape", [x, g.ints([1, -1, heads * c.headDim])]); // [1, N, heads*D]
    const rotated = g.op(
      "RotaryEmbedding",
      [seq, rope.rows, rope.cos, rope.sin],
      { interleaved: 0 },
      MS_DOMAIN,
    );
    return g.op("Reshape", [rotated, g.ints([-1, heads, c.headDim])]);
  }
}
