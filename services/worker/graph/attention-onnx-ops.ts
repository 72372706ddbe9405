// Attention from standard ONNX operators: softmax(Q K^T / sqrt(D) + bias) V.
// Grouped-query attention reshapes Q [B,H,S,D] to [B,KV,G*S,D] so each K/V head serves its G query
// heads without repeating K/V G times.
// The cached keys and values are used as gathered, head-major [B,KV,P,D], and never joined to the new
// tokens': scores against the past and against the new keys are computed apart and joined (they are
// [B,H,S,P+S], small beside K/V at decode), and the context sums the two products. K^T is a Transpose
// of the last two axes that onnxruntime folds into its MatMul (FusedMatMul, transB). A decode step of
// 64 sequences with 415 cached tokens then holds one 26 MiB copy of a layer's K (or V) where it held
// three (gathered, concatenated, transposed), and onnxruntime's arena, grown by powers of two to its
// largest step, stays smaller (issue 18); the decode group's is gathered in two halves of its rows,
// 13 MiB each, never alive together (attention-past-halves.ts).

import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionBackend, AttentionInputs } from "./attention-backend.ts";
import { pastProducts } from "./attention-past-halves.ts";
import type { GraphBuilder } from "./onnx-builder.ts";

export const onnxOpsAttention: AttentionBackend = {
  name: "onnx-ops",
  build(g: GraphBuilder, c: DecoderConfig, group, x: AttentionInputs): string {
    const { numHeads: H, numKvHeads: KV, headDim: D } = c;
    const headMajor = (t: string) => g.op("Transpose", [t], { perm: [0, 2, 1, 3] });
    const transposed = (t: string) => g.op("Transpose", [t], { perm: [0, 1, 3, 2] }); // [.., D, T]
    const newKeys = headMajor(x.newKey); // [B,KV,S,D]
    const newValues = headMajor(x.newValue);
    // Scaled before the products: the scores' two parts are then scaled in neither.
    const query = g.op("Mul", [x.query, g.scalar(1 / Math.sqrt(D))]);
    const qGrouped = g.op("Reshape", [headMajor(query), g.ints([0, KV, -1, D])]); // [B,KV,G*S,D]
    const products = pastProducts(g, c, group, x);
    const scores = products.scores(qGrouped, transposed, newKeys); // [B,KV,G*S,P+S]
    const perHead = g.op("Reshape", [scores, g.ints([0, H, -1, 0])]); // [B,H,S,P+S]
    const probs = g.op("Softmax", [g.op("Add", [perHead, x.bias])], { axis: -1 });
    const grouped = g.op("Reshape", [probs, g.ints([0, KV, -1, 0])]); // [B,KV,G*S,P+S]
    const ctx = products.context(grouped, newValues); // [B,KV,G*S,D]
    const heads = headMajor(g.op("Reshape", [ctx, g.ints([0, H, -1, D])])); // [B,S,H,D]
    return g.op("Reshape", [heads, g.ints([-1, H * D])]); // [B*S, H*D]
  },
};
