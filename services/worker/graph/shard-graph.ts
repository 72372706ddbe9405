// The graphs of one shard of a parallel replica: a pipeline stage (a range of layers) on a tensor rank
// (a slice of every layer's heads and MLP columns). The stage that starts at layer 0 embeds the tokens;
// the others start from the previous stage's hidden states [N, hidden]. The stage that ends at the last
// layer applies the final norm and the LM head (its rank's vocabulary slice); the others hand on
// their hidden states.
//
// Without tensor parallelism a shard is one graph. With it, the graph is cut into segments at the
// all-reduce points (after attention's o_proj and after the MLP's down_proj): a segment ends in a
// partial sum `partial` and hands on the residual stream `residual_out`; the next segment starts from
// `residual + reduced` (the all-reduced sum). Each segment is its own onnxruntime session.
//
//   entry   tokens: input_ids [N] | hidden: hidden_in [N, hidden] | sum: residual, reduced [N, hidden]
//   exit    partial: residual_out, partial [N, hidden] | hidden: hidden_out [N, hidden] | logits [L, V/ranks]
// Attention segments take the same step inputs as the whole-model graph (decoder-graph.ts) for their
// layers only: key_cache_i/value_cache_i are the shard's pool of layer i, with its rank's KV heads.
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
  let h: string;
  switch (segment.entry) {
    case "tokens":
      h = ops.embed(g.input(SEGMENT_IO.tokens, "int64", ["tokens"]));
      break;
    case "hidden":
      h = g.input(SEGMENT_IO.hidden, "float", hiddenDims);
      break;
    case "sum":
      h = g.op("Add", [
        g.input(SEGMENT_IO.residual, "float", hiddenDims),
        g.input(SEGMENT_IO.reduced, "float", hiddenDims),
      ]);
      break;
    default: {
      const never: never = segment.entry;
      throw new Error(`unknown segment entry ${String(never)}`);
    }
  }
  let rope: Rope | undefined;
  let unpad = "";
  if (segmentAttentionLayers(segment).length > 0) {
    const positions = g.input("position_ids", "int64", ["tokens"]);
    ops.attentionGroupInputs();
    unpad = g.input("unpad_index", "int64", ["tokens"]);
    rope = ops.rotaryTables(positions);
  }
  for (const layer of segment.layers) h = ops.layer(layer, h, rope!, unpad);
  if (segment.half) {
    const { layer, part } = segment.half;
    const partial =
      part === "attention" ? ops.attentionBlock(layer, h, rope!, unpad) : ops.mlpBlock(layer, h);
    g.output(h, SEGMENT_IO.residualOut, "float", hiddenDims);
    g.output(partial, SEGMENT_IO.partial, "float", hiddenDims);
  } else if (segment.exit === "logits") {
    const logitsIndex = g.input("logits_index", "int64", ["logit_rows"]);
    const { vocab } = shardRanges(c, shard);
    g.output(ops.head(h, logitsIndex), SEGMENT_IO.logits, "float", ["logit_rows", vocab.end - vocab.start]);
  } else {
    g.output(h, SEGMENT_IO.hiddenOut, "float", hiddenDims);
  }
  return g.toBytes(c.architecture);
}
