// The products of a group's queries with its keys and of its probabilities with its values, for the
// backends that compute them with standard operators (onnx-ops, shared-prefix's tail): the cached past
// and the new tokens apart, never joined (a join copies the whole gathered past), the scores joined
// (they are small) and the context the sum of the two products.
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
  /**
   * q [B,KV,Q,D] against the cached keys, then against the new ones [B,KV,S,D]: [B,KV,Q,P+S] (`t`
   * transposes a K to [.., D, T]).
   */
  scores(q: string, t: (k: string) => string, newKeys: string): string;
  /** probs [B,KV,Q,P+S] times the cached values and the new ones [B,KV,S,D], summed: [B,KV,Q,D]. */
  context(probs: string, newValues: string): string;
}

/** The group's products; the decode group's past in two halves of its rows. */
export function pastProducts(
  g: GraphBuilder,
  c: DecoderConfig,
  group: AttentionGroup,
  x: AttentionInputs,
): PastProducts {
  const past = pastOnly(g, c, group, x);
  return {
    scores: (q, t, newKeys) =>
      g.op("Concat", [past.scores(q, t), g.op("MatMul", [q, t(newKeys)])], { axis: -1 }),
    context(probs, newValues) {
      // Split the probabilities where the past ends: P is the past rows' axis 2.
      const pastLength = g.op("Shape", [x.pastRows], { start: 2, end: 3 });
      const end = g.ints([Number.MAX_SAFE_INTEGER]);
      const lastAxis = g.ints([-1]);
      const pastProbs = g.op("Slice", [probs, g.ints([0]), pastLength, lastAxis]);
      const newProbs = g.op("Slice", [probs, pastLength, end, lastAxis]);
      return g.op("Add", [past.context(pastProbs), g.op("MatMul", [newProbs, newValues])]);
    },
  };
}

interface PastOnly {
  scores(q: string, t: (k: string) => string): string;
  context(probs: string): string;
}

function pastOnly(g: GraphBuilder, c: DecoderConfig, group: AttentionGroup, x: AttentionInputs): PastOnly {
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
