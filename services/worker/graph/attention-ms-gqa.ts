// Attention of the decode group through onnxruntime's com.microsoft GroupQueryAttention kernel (one
// query per sequence, past K/V in BNSH with per-sequence lengths in seqlens_k). Prefill chunks keep
// the standard-operator path: GroupQueryAttention needs every sequence of a batch to add the same
// number of tokens, which chunks of different lengths do not.
import type { AttentionBackend } from "./attention-backend.ts";
import { onnxOpsAttention } from "./attention-onnx-ops.ts";
import { MS_DOMAIN } from "./onnx-builder.ts";

/** Extra inputs of the decode group: past length per sequence, and the longest total length. */
export const GQA_SEQLENS = "decode_seqlens_k";
export const GQA_TOTAL_LENGTH = "decode_total_length";

export const msGqaAttention: AttentionBackend = {
  name: "ms-gqa",
  // GroupQueryAttention takes the gathered past K and V whole and always writes present copies, so a
  // 64-row decode step holds four copies of a layer's past where onnx-ops holds half of one
  // (attention-past-halves.ts): `tessera serve` on the base preset after 10 rounds of 64 streams held
  // 1156 MiB with it against 1094 (bench engine memory, issue 18). Under load the race's timings swing
  // by more than the backends differ; it is picked only where it is clearly faster.
  raceHandicap: 1.15,
  build(g, c, group, x) {
    if (group !== "decode") return onnxOpsAttention.build(g, c, group, x);
    const { numHeads: H, numKvHeads: KV, headDim: D } = c;
    const seqlens = g.input(GQA_SEQLENS, "int32", ["decode_batch"]);
    const total = g.input(GQA_TOTAL_LENGTH, "int32", [1]);
    const flat = (t: string, heads: number) => g.op("Reshape", [t, g.ints([0, 0, heads * D])]); // [B,1,heads*D]
    const attrs: Record<string, number | { float: number }> = {
      num_heads: H,
      kv_num_heads: KV,
      scale: { float: 1 / Math.sqrt(D) },
    };
    if (c.slidingWindow !== undefined) attrs["local_window_size"] = c.slidingWindow;
    const [out] = g.opN(
      "GroupQueryAttention",
      [
        flat(x.query, H),
        flat(x.newKey, KV),
        flat(x.newValue, KV),
        x.pastKey, // [B,KV,P,D]: BNSH already
        x.pastValue,
        seqlens,
        total,
      ],
      3,
      attrs,
      MS_DOMAIN,
    );
    return g.op("Reshape", [out!, g.ints([-1, H * D])]);
  },
};
