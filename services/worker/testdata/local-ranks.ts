// Helpers for specs that run a tensor-parallel group's ranks side by side in one process.
import type { Reduce } from "../runtime/shard-executor.ts";

/** All-reduce among `size` in-process ranks: sums in rank order once every rank has given its part. */
export function localGroup(size: number): Reduce[] {
  const rounds = new Map<number, { parts: Float32Array[]; resolve: ((sum: Float32Array) => void)[] }>();
  const calls = Array.from({ length: size }, () => 0);
  return calls.map((_, rank) => (_segment, partial) => {
    const round = calls[rank]!++;
    const r = rounds.get(round) ?? { parts: [], resolve: [] };
    rounds.set(round, r);
    r.parts[rank] = partial;
    return new Promise<Float32Array>((resolve) => {
      r.resolve.push(resolve);
      if (r.resolve.length < size) return;
      const sum = new Float32Array(partial.length);
      for (const p of r.parts) for (let i = 0; i < sum.length; i++) sum[i]! += p[i]!;
      rounds.delete(round);
      for (const done of r.resolve) done(sum.slice());
    });
  });
}

/** The greedy id of each row of `logits` ([rows, vocab]). */
export function argmaxRows(logits: Float32Array, vocab: number): number[] {
  const ids: number[] = [];
  for (let r = 0; r < logits.length / vocab; r++) {
    let best = 0;
    for (let i = 1; i < vocab; i++) if (logits[r * vocab + i]! > logits[r * vocab + best]!) best = i;
    ids.push(best);
  }
  return ids;
}
