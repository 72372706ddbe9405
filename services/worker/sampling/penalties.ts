// Repetition, presence and frequency penalties (vLLM semantics) and the per-request token history
// they read.
//
// For every token id in the prompt or the output so far, in this order:
//   repetition: logit > 0 ? logit / repetition_penalty : logit * repetition_penalty (prompt + output)
//   frequency and presence: logit -= frequency_penalty * count + presence_penalty * (count > 0)
//     where count is the number of times the id was generated (output only).
// Only the ids a request has seen are touched: the cost per step is O(distinct ids in the history)
// (O(distinct output ids) when repetition_penalty is off), never O(vocabulary).

import { Code, TesseraError } from "../../kernel/errors.ts";

/** Largest finite float32: penalized logits are clamped to it so a huge penalty cannot overflow to Infinity. */
const FLOAT32_MAX = 3.4028234663852886e38;

/**
 * The tokens one request has seen, for penalties: the distinct prompt ids and how often each id was
 * generated. Create one per request from its ORIGINAL prompt and call `append` with every generated
 * token; it belongs to the request, so a request preempted and recomputed keeps its history (do not
 * rebuild it from prompt + output, which would count the output as prompt).
 *
 * Memory and time are proportional to the distinct ids seen, not to the vocabulary.
 */
export class TokenHistory {
  readonly #slotOf = new Map<number, number>();
  /** Distinct ids, by slot: the prompt's first (slots 0..promptDistinct-1), then ids only generated. */
  readonly #ids: number[] = [];
  /** Times each slot's id was generated. */
  readonly #counts: number[] = [];
  /** Slots generated at least once, in order of first generation. */
  readonly #outputSlots: number[] = [];
  readonly #promptDistinct: number;
  #outputLength = 0;

  constructor(promptIds: ArrayLike<number>) {
    for (let i = 0; i < promptIds.length; i++) {
      const id = checkId(promptIds[i]!);
      if (!this.#slotOf.has(id)) this.#addSlot(id);
    }
    this.#promptDistinct = this.#ids.length;
  }

  /** Records one generated token. */
  append(tokenId: number): void {
    const id = checkId(tokenId);
    let slot = this.#slotOf.get(id);
    if (slot === undefined) slot = this.#addSlot(id);
    if (this.#counts[slot] === 0) this.#outputSlots.push(slot);
    this.#counts[slot]! += 1;
    this.#outputLength++;
  }

  /** Number of tokens appended so far. */
  get outputLength(): number {
    return this.#outputLength;
  }

  /** Number of distinct ids in the prompt. */
  get promptDistinct(): number {
    return this.#promptDistinct;
  }

  /** Times `tokenId` was generated (0 if never). */
  count(tokenId: number): number {
    const slot = this.#slotOf.get(tokenId);
    return slot === undefined ? 0 : this.#counts[slot]!;
  }

  /** Whether `tokenId` occurs in the prompt. */
  inPrompt(tokenId: number): boolean {
    const slot = this.#slotOf.get(tokenId);
    return slot !== undefined && slot < this.#promptDistinct;
  }

  /**
   * Writes the ids the penalties touch, their raw logits and their penalized logits (as float32,
   * clamped to the finite float32 range unless the raw logit is -Infinity) into `out`, growing its
   * arrays when needed; returns how many. With `repetition` = 1 only generated ids are touched.
   */
  collect(logits: Float32Array, penalties: Penalties, out: PenaltyScratch): number {
    const all = penalties.repetition !== 1;
    const n = all ? this.#ids.length : this.#outputSlots.length;
    out.reserve(n);
    const { ids, raw, penalized } = out;
    const vocab = logits.length;
    for (let i = 0; i < n; i++) {
      const slot = all ? i : this.#outputSlots[i]!;
      const id = this.#ids[slot]!;
      if (id >= vocab) {
        throw new TesseraError(
          Code.INTERNAL,
          `sampler: history token ${id} is outside the logits (${vocab})`,
        );
      }
      const r = logits[id]!;
      ids[i] = id;
      raw[i] = r;
      penalized[i] = penalize(r, this.#counts[slot]!, penalties);
    }
    return n;
  }

  /**
   * The ids `collect` would touch, in the same order, with how often each was generated (0: in the
   * prompt only): what a sampler elsewhere needs to apply these penalties (`collectListed`).
   */
  touched(penalties: Penalties): { ids: Int32Array; counts: Int32Array } {
    const all = penalties.repetition !== 1;
    const n = all ? this.#ids.length : this.#outputSlots.length;
    const ids = new Int32Array(n);
    const counts = new Int32Array(n);
    for (let i = 0; i < n; i++) {
      const slot = all ? i : this.#outputSlots[i]!;
      ids[i] = this.#ids[slot]!;
      counts[i] = this.#counts[slot]!;
    }
    return { ids, counts };
  }

  #addSlot(id: number): number {
    const slot = this.#ids.length;
    this.#slotOf.set(id, slot);
    this.#ids.push(id);
    this.#counts.push(0);
    return slot;
  }
}

/**
 * `collect` over a list that `TokenHistory.touched` made (possibly in another process): the same
 * ids, raw and penalized logits, in the same order; returns how many.
 */
export function collectListed(
  logits: Float32Array,
  listed: { ids: Int32Array; counts: Int32Array },
  penalties: Penalties,
  out: PenaltyScratch,
): number {
  const n = listed.ids.length;
  if (listed.counts.length !== n) {
    throw new TesseraError(Code.INTERNAL, "penalties: ids and counts differ in length");
  }
  out.reserve(n);
  const { ids, raw, penalized } = out;
  for (let i = 0; i < n; i++) {
    const id = listed.ids[i]!;
    if (!(id >= 0 && id < logits.length)) {
      throw new TesseraError(
        Code.INTERNAL,
        `sampler: history token ${id} is outside the logits (${logits.length})`,
      );
    }
    const r = logits[id]!;
    ids[i] = id;
    raw[i] = r;
    penalized[i] = penalize(r, listed.counts[i]!, penalties);
  }
  return n;
}

/**
 * One touched logit, penalized: repetition first, then frequency and presence for a generated id
 * (`count` times); clamped to the finite float32 range unless the raw logit is -Infinity.
 */
function penalize(r: number, count: number, p: Penalties): number {
  let v = r;
  if (p.repetition !== 1) v = v > 0 ? v / p.repetition : v * p.repetition;
  if (count > 0) v -= p.frequency * count + p.presence;
  if (v > FLOAT32_MAX) return FLOAT32_MAX;
  if (v < -FLOAT32_MAX && r !== Number.NEGATIVE_INFINITY) return -FLOAT32_MAX;
  return v;
}

/** Penalty settings; the neutral values are repetition 1, presence 0, frequency 0. */
export interface Penalties {
  repetition: number;
  presence: number;
  frequency: number;
}

/** Whether any penalty is on. */
export function hasPenalties(p: Penalties): boolean {
  return p.repetition !== 1 || p.presence !== 0 || p.frequency !== 0;
}

/** Reusable parallel arrays for the touched ids; one per thread is enough (sampling is synchronous). */
export class PenaltyScratch {
  ids = new Int32Array(0);
  raw = new Float32Array(0);
  penalized = new Float32Array(0);

  /** Makes room for `n` entries, keeping those already written. */
  reserve(n: number): void {
    if (this.ids.length >= n) return;
    const size = Math.max(n, 2 * this.ids.length, 64);
    const { ids, raw, penalized } = this;
    this.ids = new Int32Array(size);
    this.raw = new Float32Array(size);
    this.penalized = new Float32Array(size);
    this.ids.set(ids);
    this.raw.set(raw);
    this.penalized.set(penalized);
  }
}

function checkId(id: number): number {
  if (!(Number.isInteger(id) && id >= 0 && id <= 0x7fffffff)) {
    throw new TesseraError(Code.INTERNAL, `token history: ${id} is not a token id`);
  }
  return id;
}
