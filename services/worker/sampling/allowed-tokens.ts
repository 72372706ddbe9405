// The ids a structured-output row may sample, as the bitmask grammar engines fill (xgrammar's layout:
// bit `id % 32` of 32-bit word `id >> 5` set = allowed). Ids past the mask's end (a model's padding rows
// beyond its tokenizer) are not allowed.

import { Code, TesseraError } from "../../kernel/errors.ts";

/** Sets every logit the mask does not allow to -Infinity; throws when it allows none of them. */
export function maskDisallowed(logits: Float32Array, allowed: Int32Array): void {
  const n = logits.length;
  const words = Math.min(allowed.length, Math.ceil(n / 32));
  let any = 0;
  for (let w = 0; w < words; w++) {
    const bits = allowed[w]!;
    if (bits === -1) {
      any |= 1;
      continue;
    }
    const base = w * 32;
    const end = Math.min(base + 32, n);
    if (bits === 0) {
      logits.fill(Number.NEGATIVE_INFINITY, base, end);
      continue;
    }
    any |= 1;
    for (let id = base; id < end; id++) {
      if ((bits & (1 << (id - base))) === 0) logits[id] = Number.NEGATIVE_INFINITY;
    }
  }
  if (words * 32 < n) logits.fill(Number.NEGATIVE_INFINITY, words * 32, n);
  if (any === 0) throw new TesseraError(Code.INTERNAL, "structured output: the grammar allows no token here");
}

/** Whether `id` is allowed. */
export function isAllowed(allowed: Int32Array, id: number): boolean {
  const word = allowed[id >> 5];
  return word !== undefined && (word & (1 << (id & 31))) !== 0;
}

/** The allowed ids, in order (for tests, logs and the completed-grammar check: few ids usually). */
export function allowedIds(allowed: Int32Array, limit: number, max = Number.POSITIVE_INFINITY): number[] {
  const ids: number[] = [];
  const words = Math.min(allowed.length, Math.ceil(limit / 32));
  for (let w = 0; w < words && ids.length < max; w++) {
    let bits = allowed[w]!;
    while (bits !== 0 && ids.length < max) {
      const bit = 31 - Math.clz32(bits & -bits);
      const id = w * 32 + bit;
      if (id < limit) ids.push(id);
      bits &= bits - 1;
    }
  }
  return ids;
}
