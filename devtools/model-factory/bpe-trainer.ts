// Deterministic byte-level BPE training, following the algorithm of Hugging Face's BpeTrainer: the vocab
// is the special tokens, then the 256 byte characters sorted by code point, then one token per merge; each
// step merges the most frequent adjacent pair (ties: the pair with the smaller ids), until the vocab
// reaches its target size or no pair occurs often enough.
import { TesseraError } from "../../services/kernel/errors.ts";
import { BYTE_TO_CHAR, bytesToByteLevel } from "../../services/tokenizer/byte-level.ts";
import { GPT2_PATTERN } from "../../services/tokenizer/pre-tokenizer.ts";

/** The 256 byte characters sorted by code point: the initial alphabet, in the order HF's trainer adds it. */
export const BYTE_ALPHABET: readonly string[] = [...BYTE_TO_CHAR].sort(
  (a, b) => a.codePointAt(0)! - b.codePointAt(0)!,
);

const GPT2_SPLIT = new RegExp(GPT2_PATTERN, "gu");
const utf8 = new TextEncoder();

/**
 * Splits text as the ByteLevel pre-tokenizer does (GPT-2's pattern, add_prefix_space false) into
 * byte-level words: each piece's UTF-8 bytes in the tokenizer's alphabet (space -> "Ġ").
 */
export function preTokenize(text: string): string[] {
  return (text.match(GPT2_SPLIT) ?? []).map((piece) => bytesToByteLevel(utf8.encode(piece)));
}

export interface BpeTrainOptions {
  /** Target vocab size, special tokens and the 256 byte characters included. */
  readonly vocabSize: number;
  /** Given ids 0, 1, ... in this order. */
  readonly specialTokens?: readonly string[];
  /** A pair must occur at least this often (summed over the corpus) to be merged; default 2. */
  readonly minFrequency?: number;
}

export interface TrainedBpe {
  /** id → token. */
  readonly vocab: readonly string[];
  /** Merges in priority order, as [left, right]. */
  readonly merges: readonly (readonly [string, string])[];
  readonly specialTokens: readonly string[];
}

const PAIR_SHIFT = 2 ** 20; // ids stay below this

interface HeapEntry {
  count: number;
  a: number;
  b: number;
}

/** Max-heap on count, then the smaller (a, b) first, as HF's `Merge` ordering. */
class PairHeap {
  private readonly items: HeapEntry[] = [];

  get size(): number {
    return this.items.length;
  }

  private before(x: HeapEntry, y: HeapEntry): boolean {
    if (x.count !== y.count) return x.count > y.count;
    if (x.a !== y.a) return x.a < y.a;
    return x.b < y.b;
  }

  push(e: HeapEntry): void {
    const h = this.items;
    h.push(e);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (!this.before(h[i]!, h[p]!)) break;
      [h[i], h[p]] = [h[p]!, h[i]!];
      i = p;
    }
  }

  pop(): HeapEntry | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length === 0 || last === undefined) return top;
    h[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < h.length && this.before(h[l]!, h[m]!)) m = l;
      if (r < h.length && this.before(h[r]!, h[m]!)) m = r;
      if (m === i) break;
      [h[i], h[m]] = [h[m]!, h[i]!];
      i = m;
    }
    return top;
  }
}

/** Counts the byte-level words of `texts` (GPT-2 split, as the ByteLevel pre-tokenizer). */
export function countWords(texts: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const text of texts) for (const w of preTokenize(text)) counts.set(w, (counts.get(w) ?? 0) + 1);
  return counts;
}

export function trainByteLevelBpe(texts: readonly string[], options: BpeTrainOptions): TrainedBpe {
  const specialTokens = options.specialTokens ?? [];
  const minFrequency = Math.max(1, options.minFrequency ?? 2);
  const base = specialTokens.length + BYTE_ALPHABET.length;
  if (!Number.isInteger(options.vocabSize) || options.vocabSize < base || options.vocabSize >= PAIR_SHIFT) {
    throw TesseraError.invalidArgument("vocabSize", `must be an integer in [${base}, ${PAIR_SHIFT})`);
  }
  const vocab: string[] = [...specialTokens, ...BYTE_ALPHABET];
  const ids = new Map<string, number>();
  vocab.forEach((t, i) => {
    if (ids.has(t))
      throw TesseraError.invalidArgument("specialTokens", `duplicate token ${JSON.stringify(t)}`);
    ids.set(t, i);
  });

  // Words in a fixed order (the result does not depend on it, but the work does).
  const wordCounts = [...countWords(texts)].sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
  const words: number[][] = wordCounts.map(([w]) => [...w].map((c) => ids.get(c)!));
  const counts: number[] = wordCounts.map(([, n]) => n);

  const pairCounts = new Map<number, number>();
  const where = new Map<number, Set<number>>();
  const addPairs = (w: number, sign: 1 | -1, touched: Set<number> | undefined) => {
    const word = words[w]!;
    const n = counts[w]! * sign;
    for (let i = 0; i + 1 < word.length; i++) {
      const key = word[i]! * PAIR_SHIFT + word[i + 1]!;
      pairCounts.set(key, (pairCounts.get(key) ?? 0) + n);
      if (sign > 0) {
        const set = where.get(key);
        if (set === undefined) where.set(key, new Set([w]));
        else set.add(w);
        touched?.add(key);
      }
    }
  };
  for (let w = 0; w < words.length; w++) addPairs(w, 1, undefined);

  const heap = new PairHeap();
  for (const [key, count] of pairCounts)
    heap.push({ count, a: Math.floor(key / PAIR_SHIFT), b: key % PAIR_SHIFT });

  const merges: [string, string][] = [];
  while (vocab.length < options.vocabSize && heap.size > 0) {
    const top = heap.pop()!;
    const key = top.a * PAIR_SHIFT + top.b;
    const current = pairCounts.get(key) ?? 0;
    if (top.count !== current) {
      if (current > 0) heap.push({ count: current, a: top.a, b: top.b });
      continue;
    }
    if (current < minFrequency) break;
    const left = vocab[top.a]!;
    const right = vocab[top.b]!;
    const merged = left + right;
    let id = ids.get(merged);
    if (id === undefined) {
      id = vocab.length;
      vocab.push(merged);
      ids.set(merged, id);
    }
    merges.push([left, right]);

    const touched = new Set<number>();
    for (const w of where.get(key) ?? []) {
      const word = words[w]!;
      let found = false;
      for (let i = 0; i + 1 < word.length; i++) {
        if (word[i] === top.a && word[i + 1] === top.b) {
          found = true;
          break;
        }
      }
      if (!found) continue;
      addPairs(w, -1, undefined);
      const next: number[] = [];
      for (let i = 0; i < word.length; i++) {
        if (i + 1 < word.length && word[i] === top.a && word[i + 1] === top.b) {
          next.push(id);
          i++;
        } else {
          next.push(word[i]!);
        }
      }
      words[w] = next;
      addPairs(w, 1, touched);
    }
    where.delete(key);
    pairCounts.delete(key);
    for (const k of touched) {
      const c = pairCounts.get(k) ?? 0;
      if (c > 0 && k !== key) heap.push({ count: c, a: Math.floor(k / PAIR_SHIFT), b: k % PAIR_SHIFT });
    }
  }
  return { vocab, merges, specialTokens: [...specialTokens] };
}
