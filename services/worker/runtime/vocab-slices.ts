// The LM head of a tensor-parallel last stage is split by vocabulary rows: rank r computes the logits
// of ids evenPart(vocab, ranks, r) for every row. The sampler needs whole rows: this joins the slices.
import { evenPart } from "../model/tensor-slice.ts";

/** Joins per-rank logits slices [L, V_r] (in rank order) into [L, V]. */
export function joinVocabSlices(slices: readonly Float32Array[], vocab: number): Float32Array {
  if (slices.length === 1) return slices[0]!;
  const first = evenPart(vocab, slices.length, 0);
  const rows = slices[0]!.length / (first.end - first.start);
  const out = new Float32Array(rows * vocab);
  slices.forEach((slice, rank) => {
    const { start, end } = evenPart(vocab, slices.length, rank);
    const width = end - start;
    if (slice.length !== rows * width)
      throw new Error(`logits slice of rank ${rank} has ${slice.length} floats, expected ${rows * width}`);
    for (let r = 0; r < rows; r++) out.set(slice.subarray(r * width, (r + 1) * width), r * vocab + start);
  });
  return out;
}
