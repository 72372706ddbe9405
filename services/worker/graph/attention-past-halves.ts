// The products of a group's queries with its cached keys and of its probabilities with its cached
// values, for the backends that compute them with standard operators (onnx-ops, shared-prefix's tail).
// The decode group's are taken in two halves of its rows, each half gathering its own K (and V) from the
// pool just before its product: a decode step of 64 rows at 415 cached tokens gathers 26 MiB of a
// layer's K, and onnxruntime's CPU arena, which keeps regions of doubling size that hold its largest
// steps, took a 32 MiB region for it (issue 18). Halved, the largest is 13 MiB and onnxruntime runs half
// a's product, which frees its K, before gathering half b's (measured: one 64-row step at 415 tokens took
// regions of 1, 2, 4, 16 and 16 MiB, against 1, 2, 32 and 32). Rows are independent, so the halves'
// scores and contexts are joined on the batch axis; with one row, half b is empty.
import type { DecoderConfig } from "../arch/decoder-config.ts";
import type { AttentionInputs } from "./attention-backend.ts";
import type { AttentionGroup } from "./graph-names.ts";
import type { GraphBuilder } from "./onnx-builder.ts";

export interface PastProducts {
  /** q [B,KV,Q,D] against the cached keys: [B,KV,Q,P] (`t` transposes a K to [.., D, P]). */
  scores(q: string, t: (k: string) => string): string;
  /** probs [B,KV,Q,P] times the cached values: [B,KV,Q,D]. */
  context(probs: string): string;
}
/** The group's past products; the decode group's in two halves of its rows. */
export function pastProducts(
  g: GraphBuilder,
  c: DecoderConfig,
  group: AttentionGroup,
  x: AttentionInputs,
): PastProducts {
  if (group !== "decode")
    return {
      scores: (q: string, t: (k: string) => string) => g.op("MatMul", [q, t(x.pastKey)]),
      context: (probs: string) => g.op("MatMul", [probs, x.pastValue]),
    };
  const D = c.headDim;
  const rows = g.op("Shape", [x.pastRows], { start: 0, end: 1 });
  const half = g.op("Div", [g.op("Add", [rows, g.ints([1])]), g.ints([2])]); // ceil(B/2)
  const axis0 = g.ints([0]);
  const cuts: [string, string][] = [
    [g.ints([0]), half],
    [half, g.ints([Number.MAX_SAFE_INTEGER])],
  ];
  const slice = (t: string, [from, to]: [string, string]) => g.op("Slice", [t, from, to, axis0]);
  const gatherHalf = (cache: string, cut: [string, string]) =>
    g.op("Gather", [g.op("Reshape", [cache, g.ints([-1, D])]), slice(x.pastRows, cut)], { axis: 0 });
  return {
    scores: (q: string, t: (k: string) => string) =>
      g.op(
        "Concat",
        cuts.map((cut) => g.op("MatMul", [slice(q, cut), t(gatherHalf(x.keyCache, cut))])),
        { axis: 0 },
      ),
    context: (probs: string) =>
      g.op(
        "Concat",
        cuts.map((cut) => g.op("MatMul", [slice(probs, cut), gatherHalf(x.valueCache, cut)])),
        { axis: 0 },
      ),
  };
}
