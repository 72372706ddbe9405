// The onnxruntime feeds of a step's index and mask tensors (step-inputs.ts), shared by every graph
// that attends over the KV pool: the whole model's and a shard's segments.
import * as ort from "onnxruntime-node";
import { GQA_SEQLENS, GQA_TOTAL_LENGTH } from "../graph/attention-ms-gqa.ts";
import { SHARED_BIAS, SHARED_INDEX, SHARED_MEMBERS, SHARED_ROWS } from "../graph/attention-shared-prefix.ts";
import { ATTENTION_GROUPS, ROPE_INV_FREQ } from "../graph/graph-names.ts";
import type { StepInputs } from "./step-inputs.ts";

const i64 = (data: BigInt64Array, dims: number[]) => new ort.Tensor("int64", data, dims);

/** position_ids, unpad_index, logits_index, each group's indices and mask, the GQA lengths when asked, and per-token rope tables (dynamic rope). */
export function stepFeeds(inputs: StepInputs, gqa: boolean): Record<string, ort.Tensor> {
  const n = inputs.positions.length;
  const feeds: Record<string, ort.Tensor> = {
    position_ids: i64(inputs.positions, [n]),
    unpad_index: i64(inputs.unpadIndex, [n]),
    logits_index: i64(inputs.logitsIndex, [inputs.logitsIndex.length]),
  };
  for (const group of ATTENTION_GROUPS) {
    const t = inputs.groups[group];
    feeds[`${group}_query_index`] = i64(t.queryIndex, [t.batch, t.queries]);
    feeds[`${group}_past_index`] = i64(t.pastIndex, [t.batch, t.past]);
    feeds[`${group}_bias`] = new ort.Tensor("float32", t.bias, [t.batch, 1, t.queries, t.past + t.queries]);
  }
  const rope = inputs.ropeInverseFrequencies;
  if (rope) feeds[ROPE_INV_FREQ] = new ort.Tensor("float32", rope, [n, n === 0 ? 0 : rope.length / n]);
  const shared = inputs.shared;
  if (shared) {
    feeds[SHARED_INDEX] = i64(shared.index, [shared.groups, shared.length]);
    feeds[SHARED_BIAS] = new ort.Tensor("float32", shared.bias, [shared.groups, 1, 1, shared.length]);
    feeds[SHARED_MEMBERS] = i64(shared.memberIndex, [shared.groups, shared.members]);
    feeds[SHARED_ROWS] = i64(shared.rowIndex, [shared.rowIndex.length]);
  }
  if (gqa) {
    const d = inputs.groups.decode;
    feeds[GQA_SEQLENS] = new ort.Tensor("int32", Int32Array.from(d.numPast), [d.batch]);
    feeds[GQA_TOTAL_LENGTH] = new ort.Tensor("int32", Int32Array.of(d.past + 1), [1]);
  }
  return feeds;
}

/** The token ids of a step as the graph's int64 input. */
export function tokenFeed(tokens: Int32Array): ort.Tensor {
  return i64(BigInt64Array.from(tokens, BigInt), [tokens.length]);
}
