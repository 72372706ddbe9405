// Splits a step's sequences into micro-batches so pipeline stages overlap: while stage 1 runs
// micro-batch 0, stage 0 runs micro-batch 1. Sequences of one step are independent (each reads and
// writes only its own blocks, and a block shared through the prefix cache is full and read-only), so
// any split gives the same results. Micro-batches are contiguous runs of sequences with about the same
// number of tokens, so their logits rows, joined in order, are the step's rows in order.
import type { SequenceStep } from "../runtime/step-inputs.ts";

export interface MicroBatchSlice {
  seqs: SequenceStep[];
  /** The micro-batch's tokens within the step's token array: [tokenStart, tokenEnd). */
  tokenStart: number;
  tokenEnd: number;
}

export function splitMicroBatches(seqs: readonly SequenceStep[], count: number): MicroBatchSlice[] {
  const parts = Math.max(1, Math.min(count, seqs.length));
  const total = seqs.reduce((n, s) => n + s.numNew, 0);
  const slices: MicroBatchSlice[] = [];
  let current: MicroBatchSlice = { seqs: [], tokenStart: 0, tokenEnd: 0 };
  for (const [i, s] of seqs.entries()) {
    current.seqs.push(s);
    current.tokenEnd += s.numNew;
    const left = seqs.length - i - 1;
    const partsLeft = parts - slices.length - 1;
    const full = current.tokenEnd >= (total * (slices.length + 1)) / parts;
    if (partsLeft > 0 && left >= partsLeft && (full || left === partsLeft)) {
      slices.push(current);
      current = { seqs: [], tokenStart: current.tokenEnd, tokenEnd: current.tokenEnd };
    }
  }
  slices.push(current);
  return slices;
}
