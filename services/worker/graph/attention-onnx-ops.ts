// Attention from standard ONNX operators: softmax(Q K^T / sqrt(D) + bias) V.
// Grouped-query attention reshapes Q [B,H,S,D] to [B,KV,G*S,D] so each K/V head serves its G query
// heads without repeating K/V G times.

import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionBackend, AttentionInputs } from "./attention-backend.ts";
import type { GraphBuilder } from "./onnx-builder.ts";

export const onnxOpsAttention: AttentionBackend = {
  name: "onnx-ops",
  build(g: GraphBuilder, c: DecoderConfig, _group, x: AttentionInputs): string {
    const { numHeads: H, numKvHeads: KV, headDim: D } = c;
    const keys = g.op("Concat", [x.pastKey, x.newKey], { axis: 1 }); // [B,T,KV,D]
    const values = g.op("Concat", [x.pastValue, x.newValue], { axis: 1 });
    const kT = g.op("Transpose", [keys], { perm: [0, 2, 3, 1] }); // [B,KV,D,T]
    const vT = g.op("Transpose", [values], { perm: [0, 2, 1, 3] }); // [B,KV,T,D]
    const qT = g.op("Transpose", [x.query], { perm: [0, 2, 1, 3] }); // [B,H,S,D]
    const qGrouped = g.op("Reshape", [qT, g.ints([0, KV, -1, D])]); // [B,KV,G*S,D]
    const scaled = g.op("Mul", [g.op("MatMul", [qGrouped, kT]), g.scalar(1 / Math.sqrt(D))]); // [B,KV,G*S,T]
    const perHead = g.op("Reshape", [scaled, g.ints([0, H, -1, 0])]); // [B,H,S,T]
    const probs = g.op("Softmax", [g.op("Add", [perHead, x.bias])], { axis: -1 });
    const ctx = g.op("MatMul", [g.op("Reshape", [probs, g.ints([0, KV, -1, 0])]), vT]); // [B,KV,G*S,D]
    const heads = g.op("Transpose", [g.op("Reshape", [ctx, g.ints([0, H, -1, D])])], { perm: [0, 2, 1, 3] });
    return g.op("Reshape", [heads, g.ints([-1, H * D])]); // [B*S, H*D]
  },
};
