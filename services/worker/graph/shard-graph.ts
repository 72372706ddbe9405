// The one graph builder: the ONNX graphs of a shard of a decoder-only transformer (the Llama family,
// dense or mixture-of-experts), built from its normalized config and checkpoint weights. A shard is a
// pipeline stage (a range of layers) on a tensor rank (a slice of every layer's heads and MLP columns);
// a single process is a group of one, whose one shard is the whole model (wholeModel): one graph from
// token ids to logits. One run is one engine step over a batch of sequences with a paged KV cache; see
// docs/engine-memory-layout.md for the layout and why.
//
// The stage that starts at layer 0 embeds the tokens; the others start from the previous stage's
// hidden states [N, hidden]. The stage that ends at the last layer applies the final norm and the LM
// head (its rank's vocabulary slice); the others hand on their hidden states. Without tensor
// parallelism a shard is one graph. With it, the graph is cut into segments at the all-reduce points
// (after attention's o_proj and after the MLP's down_proj): a segment ends in a partial sum `partial`
// and hands on the residual stream `residual_out`; the next segment starts from `residual + reduced`
// (the all-reduced sum). Each segment is its own onnxruntime session.
//
//   entry      tokens: input_ids [N] int64, the step's N new tokens, sequence after sequence
//              | hidden: hidden_in [N, hidden] | sum: residual, reduced [N, hidden]
//   attention  (a segment with whole layers or an attention half) position_ids [N] int64;
//              key_cache_i, value_cache_i [slots, kvH, D]: the shard's KV pool of layer i, its rank's
//              KV heads (passed without a copy; slot = block * block_size + offset);
//              per attention group g in (decode, prefill):
//                g_query_index [B,S]: flat index of each sequence's new tokens (padded)
//                g_past_index [B,P]: pool slots of each sequence's cached tokens (padded)
//                g_bias [B,1,S,P+S]: 0 where a query may attend, -inf elsewhere (causal, window, padding)
//              unpad_index [N]: where each token's attention output sits in the groups' padded outputs;
//              outputs new_key_i, new_value_i [N,kvH,D]: the new tokens' K/V, which the caller writes
//              into the pool (graph outputs stay small: no full cache is ever copied out)
//   exit       partial: residual_out, partial [N, hidden] | hidden: hidden_out [N, hidden]
//              | logits: logits [L, V/ranks] of the L tokens logits_index [L] names
// Decode sequences (one new token) and prefill chunks form separate groups so a long chunk does not
// pad every decode sequence to its length. Linear layers run on the flat [N, hidden] batch.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { WeightNames } from "../arch/registry.ts";
import type { AttentionBackend } from "./attention-backend.ts";
import { DecoderOps, type Rope, shardRanges, type TensorShard } from "./decoder-ops.ts";
import type { WeightSource } from "./graph-names.ts";
import { GraphBuilder } from "./onnx-builder.ts";

export interface ShardSpec {
  /** Decoder layers [start, end) of this pipeline stage. */
  layers: { start: number; end: number };
  tensor: TensorShard;
}

export type SegmentEntry = "tokens" | "hidden" | "sum";
export type SegmentExit = "partial" | "hidden" | "logits";

export interface Segment {
  entry: SegmentEntry;
  /** Whole layers (a shard without tensor parallelism). */
  layers: number[];
  /** Half a layer (tensor parallelism): its attention or its MLP, ending in a partial sum. */
  half?: { layer: number; part: "attention" | "mlp" };
  exit: SegmentExit;
}

export const SEGMENT_IO = {
  tokens: "input_ids",
  hidden: "hidden_in",
  residual: "residual",
  reduced: "reduced",
  residualOut: "residual_out",
  partial: "partial",
  hiddenOut: "hidden_out",
  logits: "logits",
} as const;

/** The shard of a group of one (a single process): every layer, no tensor ranks. */
export function wholeModel(numLayers: number): ShardSpec {
  return { layers: { start: 0, end: numLayers }, tensor: { rank: 0, size: 1 } };
}

/** Checks a shard against the model; returns a message naming what does not fit, or undefined. */
export function shardProblem(c: DecoderConfig, spec: ShardSpec): string | undefined {
  const { start, end } = spec.layers;
  const { rank, size } = spec.tensor;
  if (!Number.isInteger(start) || start < 0 || end > c.numLayers || start >= end)
    return `layers ${start}..${end - 1} do not fit the model's ${c.numLayers} layers`;
  if (!Number.isInteger(size) || size < 1 || !Number.isInteger(rank) || rank < 0 || rank >= size)
    return `tensor rank ${rank} of ${size} is not a rank of the group`;
  if (c.numKvHeads % size !== 0 || c.numHeads % size !== 0)
    return `tensor size ${size} does not divide the model's ${c.numHeads} heads and ${c.numKvHeads} KV heads`;
  if (c.intermediateSize < size || c.vocabSize < size) return `tensor size ${size} is larger than the model`;
  return undefined;
}

/**
 * The segments of a shard: one, or with tensor parallelism one per half layer and a head. `cut` forces
 * the tensor-parallel cuts on a whole shard (each all-reduce is then the identity): that measures what
 * the cuts alone cost.
 */
export function planSegments(spec: ShardSpec, numLayers: number, cut = spec.tensor.size > 1): Segment[] {
  const { start, end } = spec.layers;
  const entry: SegmentEntry = start === 0 ? "tokens" : "hidden";
  const exit: SegmentExit = end === numLayers ? "logits" : "hidden";
  const layers = Array.from({ length: end - start }, (_, i) => start + i);
  if (!cut) return [{ entry, layers, exit }];
  const segments: Segment[] = [];
  for (const layer of layers) {
    segments.push({
      entry: segments.length === 0 ? entry : "sum",
      layers: [],
      half: { layer, part: "attention" },
      exit: "partial",
    });
    segments.push({ entry: "sum", layers: [], half: { layer, part: "mlp" }, exit: "partial" });
  }
  segments.push({ entry: "sum", layers: [], exit });
  return segments;
}

/** The layers whose KV pool a segment reads and writes. */
export function segmentAttentionLayers(segment: Segment): number[] {
  if (segment.half) return segment.half.part === "attention" ? [segment.half.layer] : [];
  return segment.layers;
}

export interface ShardGraphParts {
  config: DecoderConfig;
  names: WeightNames;
  weights: WeightSource;
  attention: AttentionBackend;
  spec: ShardSpec;
}

export function buildSegmentGraph(parts: ShardGraphParts, segment: Segment): Uint8Array {
  const { config: c, spec } = parts;
  const g = new GraphBuilder();
  const shard = spec.tensor.size > 1 ? spec.tensor : undefined;
  const ops = new DecoderOps(g, { ...parts, shard });
  const hiddenDims = ["tokens", c.hiddenSize];
  // Inputs first, in one order for every segment: the whole model's graph (one segment from tokens to
  // logits) is then the same bytes as before the runtimes merged (shard-graph.spec.ts).
  const entry = entryInputs(g, segment.entry, hiddenDims);
  const attends = segmentAttentionLayers(segment).length > 0;
  const positions = attends ? g.input("position_ids", "int64", ["tokens"]) : "";
  if (attends) ops.attentionGroupInputs();
  const unpad = attends ? g.input("unpad_index", "int64", ["tokens"]) : "";
  const logitsIndex = segment.exit === "logits" ? g.input("logits_index", "int64", ["logit_rows"]) : "";
  // The stream a segment starts from: the embedded tokens, the hidden states, or residual + reduced.
  let h = entry[0]!;
  if (segment.entry === "tokens") h = ops.embed(h);
  if (segment.entry === "sum") h = g.op("Add", entry);
  const rope: Rope | undefined = attends ? ops.rotaryTables(positions) : undefined;
  for (const layer of segment.layers) h = ops.layer(layer, h, rope!, unpad);
  if (segment.half) {
    const { layer, part } = segment.half;
    const partial =
      part === "attention" ? ops.attentionBlock(layer, h, rope!, unpad) : ops.mlpBlock(layer, h);
    g.output(h, SEGMENT_IO.residualOut, "float", hiddenDims);
    g.output(partial, SEGMENT_IO.partial, "float", hiddenDims);
  } else if (segment.exit === "logits") {
    const { vocab } = shardRanges(c, shard);
    g.output(ops.head(h, logitsIndex), SEGMENT_IO.logits, "float", ["logit_rows", vocab.end - vocab.start]);
  } else {
    g.output(h, SEGMENT_IO.hiddenOut, "float", hiddenDims);
  }
  return g.toBytes(c.architecture);
}

/** The graph inputs a segment starts from: token ids, hidden states, or the residual and the reduced sum. */
function entryInputs(g: GraphBuilder, entry: SegmentEntry, hiddenDims: (string | number)[]): string[] {
  switch (entry) {
    case "tokens":
      return [g.input(SEGMENT_IO.tokens, "int64", ["tokens"])];
    case "hidden":
      return [g.input(SEGMENT_IO.hidden, "float", hiddenDims)];
    case "sum":
      return [
        g.input(SEGMENT_IO.residual, "float", hiddenDims),
        g.input(SEGMENT_IO.reduced, "float", hiddenDims),
      ];
    default: {
      const never: never = entry;
      throw new Error(`unknown segment entry ${String(never)}`);
    }
  }
}
