// tokenizer.json "model" of type BPE. A word starts as one symbol per character, then the adjacent pair
// of lowest merge rank is merged, leftmost first, until no pair has a rank (Hugging Face's
// Word::merge_all, with the same priority queue). Results are cached per word. Two ways to start:
// - byte-level (the pre-tokenizer ends with ByteLevel): the word's UTF-8 bytes, each as its byte-level
//   character ("Ġ" for a space), done here directly rather than by building the mapped string;
// - characters (SentencePiece-style, e.g. "▁Hello"): each character's own symbol; one the vocabulary
//   lacks becomes its UTF-8 bytes as "<0xHH>" tokens with byte_fallback, else the unk token (runs of
//   them fused into one with fuse_unk), else nothing, as in tokenizers 0.23's BPE::merge_word.
import type { Result } from "../kernel/errors.ts";
import { BYTE_TO_CHAR, bytesToByteLevel } from "./byte-level.ts";
import { invalid, isObject, unsupported } from "./json-fields.ts";
import { PairTable } from "./pair-table.ts";

const CACHE_ENTRIES = 100_000;
const CACHE_MAX_WORD = 256;
/** SentencePiece's space, "▁". */
const SPACE_MARK = "\u2581";
const SPACE_MARK_CODE = 0x2581;
/** Words longer than this are cut before their "▁" where no merge can cross (characters mode). */
const SPLIT_MIN_WORD = 16;
const utf8 = new TextEncoder();

export class BpeModel {
  /** Vocabulary string → id. */
  readonly vocab: ReadonlyMap<string, number>;
  /** id → vocabulary string (holes where the vocabulary skips an id). */
  readonly tokens: readonly (string | undefined)[];
  readonly #ranks: PairTable;
  /** rank → id of the merged symbol. */
  readonly #merged: Int32Array;
  /** byte → id of its one-byte symbol, -1 when the vocabulary lacks it. */
  readonly #byteIds: Int32Array;
  /** byte → id of its "<0xHH>" token, -1 when missing (characters mode). */
  readonly #fallbackIds: Int32Array;
  /** BMP code point → id of that one-character token, -1 when missing (characters mode). */
  readonly #charIds: Int32Array;
  /** Astral code point → id of that one-character token (characters mode). */
  readonly #astralIds = new Map<number, number>();
  readonly #byteLevel: boolean;
  readonly #byteFallback: boolean;
  /**
   * Characters mode, when the vocabulary has "▁" and merges are not skipped: the UTF-16 code units c
   * (other than "▁") for which some token holds c followed by "▁".
   */
  readonly #joinsBeforeSpace: Set<number> | undefined;
  readonly #unkId: number | undefined;
  readonly #fuseUnk: boolean;
  readonly #ignoreMerges: boolean;
  readonly #cache = new Map<string, readonly number[]>();

  private constructor(parts: {
    vocab: Map<string, number>;
    tokens: (string | undefined)[];
    ranks: PairTable;
    merged: Int32Array;
    unkId: number | undefined;
    fuseUnk: boolean;
    ignoreMerges: boolean;
    byteLevel: boolean;
    byteFallback: boolean;
  }) {
    this.vocab = parts.vocab;
    this.tokens = parts.tokens;
    this.#ranks = parts.ranks;
    this.#merged = parts.merged;
    this.#unkId = parts.unkId;
    this.#fuseUnk = parts.fuseUnk;
    this.#ignoreMerges = parts.ignoreMerges;
    this.#byteLevel = parts.byteLevel;
    this.#byteFallback = parts.byteFallback;
    this.#byteIds = Int32Array.from(BYTE_TO_CHAR, (c) => parts.vocab.get(c) ?? -1);
    this.#fallbackIds = new Int32Array(256);
    for (let b = 0; b < 256; b++) {
      this.#fallbackIds[b] = parts.vocab.get(`<0x${b.toString(16).toUpperCase().padStart(2, "0")}>`) ?? -1;
    }
    this.#charIds = new Int32Array(parts.byteLevel ? 0 : 0x10000).fill(-1);
    if (!parts.byteLevel && !parts.ignoreMerges && parts.vocab.has(SPACE_MARK)) {
      const joins = new Set<number>();
      for (const token of parts.vocab.keys()) {
        for (let i = token.indexOf(SPACE_MARK, 1); i > 0; i = token.indexOf(SPACE_MARK, i + 1)) {
          if (token.charCodeAt(i - 1) !== SPACE_MARK_CODE) joins.add(token.charCodeAt(i - 1));
        }
      }
      this.#joinsBeforeSpace = joins;
    }
    if (!parts.byteLevel) {
      for (const [token, id] of parts.vocab) {
        const c = token.codePointAt(0)!;
        if (token.length === 1) this.#charIds[c] = id;
        else if (token.length === 2 && c > 0xffff) this.#astralIds.set(c, id);
      }
    }
  }

  /** Whether words start as byte-level symbols (else as characters). */
  get byteLevel(): boolean {
    return this.#byteLevel;
  }

  /**
   * Parses tokenizer.json's "model". `byteLevel`: words come from a ByteLevel pre-tokenizer, so they
   * start as byte-level symbols; else as characters.
   */
  static parse(json: unknown, byteLevel = true): Result<BpeModel> {
    const field = "model";
    if (!isObject(json)) return invalid(field, "must be an object");
    if (json["type"] !== undefined && json["type"] !== "BPE") {
      return unsupported(`${field}.type`, `${String(json["type"])} is not supported (only BPE)`);
    }
    const dropout = json["dropout"];
    if (dropout !== undefined && dropout !== null && dropout !== 0) {
      return unsupported(`${field}.dropout`, "BPE dropout is not supported");
    }
    for (const affix of ["continuing_subword_prefix", "end_of_word_suffix"]) {
      const v = json[affix];
      if (v !== undefined && v !== null && v !== "")
        return unsupported(`${field}.${affix}`, "is not supported");
    }

    const rawVocab = json["vocab"];
    if (!isObject(rawVocab)) return invalid(`${field}.vocab`, "must be an object of token → id");
    const vocab = new Map<string, number>();
    const tokens: (string | undefined)[] = [];
    for (const [token, id] of Object.entries(rawVocab)) {
      if (!Number.isSafeInteger(id) || (id as number) < 0) {
        return invalid(`${field}.vocab`, `id of ${JSON.stringify(token)} must be an integer >= 0`);
      }
      vocab.set(token, id as number);
      tokens[id as number] = token;
    }

    const rawMerges = json["merges"];
    if (!Array.isArray(rawMerges)) return invalid(`${field}.merges`, "must be an array");
    const ranks = new PairTable(rawMerges.length);
    const merged = new Int32Array(rawMerges.length);
    for (const [rank, merge] of rawMerges.entries()) {
      let pair: unknown[] | undefined;
      if (typeof merge === "string") {
        const space = merge.indexOf(" ", 1);
        pair = space > 0 ? [merge.slice(0, space), merge.slice(space + 1)] : undefined;
      } else if (Array.isArray(merge)) pair = merge;
      const [a, b] = pair ?? [];
      if (pair?.length !== 2 || typeof a !== "string" || typeof b !== "string") {
        return invalid(`${field}.merges[${rank}]`, 'must be "a b" or ["a", "b"]');
      }
      const left = vocab.get(a);
      const right = vocab.get(b);
      const result = vocab.get(a + b);
      if (left === undefined || right === undefined || result === undefined) {
        return invalid(`${field}.merges[${rank}]`, `${JSON.stringify([a, b])} is not in the vocabulary`);
      }
      ranks.set(left, right, rank);
      merged[rank] = result;
    }

    const unk = json["unk_token"];
    const unkId = typeof unk === "string" ? vocab.get(unk) : undefined;
    if (typeof unk === "string" && unkId === undefined) {
      return invalid(`${field}.unk_token`, `${JSON.stringify(unk)} is not in the vocabulary`);
    }
    const model = new BpeModel({
      vocab,
      tokens,
      ranks,
      merged,
      unkId,
      fuseUnk: json["fuse_unk"] === true,
      ignoreMerges: json["ignore_merges"] === true,
      byteLevel,
      byteFallback: json["byte_fallback"] === true,
    });
    return { value: model };
  }

  /** Appends the ids of one pre-tokenized word (plain text, before the byte-level mapping). */
  encodeWord(word: string, out: number[]): void {
    if (this.#joinsBeforeSpace !== undefined && word.length > SPLIT_MIN_WORD) {
      this.#encodeSplitAtSpaces(word, out);
      return;
    }
    this.#encodeCached(word, out);
  }

  /**
   * A SentencePiece-style word is often a whole text ("▁Hello▁world..."): no pre-tokenizer splits it.
   * BPE merges never join two symbols into a string the vocabulary lacks, so where the vocabulary has
   * no token with character c followed by "▁", no merge crosses "c▁": the parts either side of it merge
   * alone to the same ids. Cutting there makes the parts small enough for the word cache.
   */
  #encodeSplitAtSpaces(word: string, out: number[]): void {
    const joins = this.#joinsBeforeSpace!;
    let from = 0;
    for (let i = word.indexOf(SPACE_MARK, 1); i > 0; i = word.indexOf(SPACE_MARK, i + 1)) {
      const before = word.charCodeAt(i - 1);
      if (before === SPACE_MARK_CODE || joins.has(before)) continue;
      this.#encodeCached(word.slice(from, i), out);
      from = i;
    }
    this.#encodeCached(from === 0 ? word : word.slice(from), out);
  }

  #encodeCached(word: string, out: number[]): void {
    let ids = this.#cache.get(word);
    if (ids === undefined) {
      ids = this.#encodeUncached(word);
      if (word.length <= CACHE_MAX_WORD) {
        if (this.#cache.size >= CACHE_ENTRIES) this.#cache.clear();
        this.#cache.set(word, ids);
      }
    }
    for (const id of ids) out.push(id);
  }

  #encodeUncached(word: string): number[] {
    if (!this.#byteLevel) return this.#encodeChars(word);
    const bytes = utf8.encode(word);
    if (this.#ignoreMerges) {
      const whole = this.vocab.get(bytesToByteLevel(bytes));
      if (whole !== undefined) return [whole];
    }
    const symbols: number[] = [];
    let lastUnk = false;
    for (const b of bytes) {
      const id = this.#byteIds[b]!;
      if (id >= 0) symbols.push(id);
      else if (this.#unkId !== undefined && !(this.#fuseUnk && lastUnk)) symbols.push(this.#unkId);
      lastUnk = id < 0;
    }
    return mergeSymbols(symbols, this.#ranks, this.#merged);
  }

  #encodeChars(word: string): number[] {
    if (this.#ignoreMerges) {
      const whole = this.vocab.get(word);
      if (whole !== undefined) return [whole];
    }
    const symbols: number[] = [];
    let lastUnk = false;
    for (let i = 0; i < word.length; i++) {
      const c = word.codePointAt(i)!;
      let id: number;
      if (c > 0xffff) {
        i++;
        id = this.#astralIds.get(c) ?? -1;
      } else id = this.#charIds[c]!;
      if (id >= 0) {
        symbols.push(id);
        lastUnk = false;
        continue;
      }
      if (this.#byteFallback && this.#pushFallback(c, symbols)) {
        lastUnk = false;
        continue;
      }
      if (this.#unkId !== undefined && !(this.#fuseUnk && lastUnk)) symbols.push(this.#unkId);
      lastUnk = this.#unkId !== undefined;
    }
    return mergeSymbols(symbols, this.#ranks, this.#merged);
  }

  /** Pushes the "<0xHH>" tokens of a character's UTF-8 bytes; false (and nothing) if one is missing. */
  #pushFallback(c: number, symbols: number[]): boolean {
    const bytes = utf8.encode(String.fromCodePoint(c));
    for (const b of bytes) if (this.#fallbackIds[b]! < 0) return false;
    for (const b of bytes) symbols.push(this.#fallbackIds[b]!);
    return true;
  }
}

/**
 * Merges a word's symbols: repeatedly the adjacent pair of lowest rank, the leftmost of equal ranks,
 * through a priority queue of (rank, position) whose stale entries are skipped when popped.
 */
export function mergeSymbols(symbols: readonly number[], ranks: PairTable, merged: Int32Array): number[] {
  const n = symbols.length;
  if (n < 2) return symbols.slice();
  const sym = Int32Array.from(symbols); // -1 once merged into its left neighbor
  const next = new Int32Array(n);
  const prev = new Int32Array(n);
  const heap = new MergeQueue(n);
  for (let i = 0; i < n; i++) {
    next[i] = i + 1 < n ? i + 1 : -1;
    prev[i] = i - 1;
    if (i + 1 < n) {
      const r = ranks.get(sym[i]!, sym[i + 1]!);
      if (r >= 0) heap.push(r, i);
    }
  }
  while (heap.size > 0) {
    const rank = heap.topRank();
    const pos = heap.pop();
    const right = next[pos]!;
    if (sym[pos]! < 0 || right < 0 || ranks.get(sym[pos]!, sym[right]!) !== rank) continue;
    sym[pos] = merged[rank]!;
    sym[right] = -1;
    const after = next[right]!;
    next[pos] = after;
    if (after >= 0) {
      prev[after] = pos;
      const r = ranks.get(sym[pos]!, sym[after]!);
      if (r >= 0) heap.push(r, pos);
    }
    const before = prev[pos]!;
    if (before >= 0) {
      const r = ranks.get(sym[before]!, sym[pos]!);
      if (r >= 0) heap.push(r, before);
    }
  }
  const out: number[] = [];
  for (let i = 0; i >= 0; i = next[i]!) out.push(sym[i]!);
  return out;
}

/** A binary min-heap of (rank, position), ordered by rank then position. */
class MergeQueue {
  #rank: Int32Array;
  #pos: Int32Array;
  size = 0;

  constructor(capacity: number) {
    this.#rank = new Int32Array(capacity);
    this.#pos = new Int32Array(capacity);
  }

  topRank(): number {
    return this.#rank[0]!;
  }

  push(rank: number, pos: number): void {
    if (this.size === this.#rank.length) {
      const r = new Int32Array(this.size * 2);
      const p = new Int32Array(this.size * 2);
      r.set(this.#rank);
      p.set(this.#pos);
      this.#rank = r;
      this.#pos = p;
    }
    let i = this.size++;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(rank, pos, this.#rank[parent]!, this.#pos[parent]!)) break;
      this.#rank[i] = this.#rank[parent]!;
      this.#pos[i] = this.#pos[parent]!;
      i = parent;
    }
    this.#rank[i] = rank;
    this.#pos[i] = pos;
  }

  /** Removes the top entry and returns its position. */
  pop(): number {
    const top = this.#pos[0]!;
    const n = --this.size;
    const rank = this.#rank[n]!;
    const pos = this.#pos[n]!;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (
        child + 1 < n &&
        before(this.#rank[child + 1]!, this.#pos[child + 1]!, this.#rank[child]!, this.#pos[child]!)
      ) {
        child++;
      }
      if (!before(this.#rank[child]!, this.#pos[child]!, rank, pos)) break;
      this.#rank[i] = this.#rank[child]!;
      this.#pos[i] = this.#pos[child]!;
      i = child;
    }
    this.#rank[i] = rank;
    this.#pos[i] = pos;
    return top;
  }
}

function before(rank: number, pos: number, rank2: number, pos2: number): boolean {
  return rank < rank2 || (rank === rank2 && pos < pos2);
}
