// Per-request token sampler: greedy, or temperature + min-p + top-k + top-p and a draw that is a pure
// function of the request's seed and the token's position (philox.ts); repetition / presence /
// frequency penalties first, in both cases. Keying the draw by position rather than by a stream that
// advances with each call makes a seeded request's tokens the same on every serving path: whole on one
// worker, split between a prefill and a decode worker, resumed on another worker after a failure,
// or sampled by a parallel group's last stage.
//
// Order (that of vLLM's v1 sampler): penalties on the raw logits (penalties.ts) and, while min_tokens is
// not reached, the eos and stop ids held back (-Infinity, held-back.ts) -> greedy argmax, or
// temperature -> min_p -> top_k -> top_p -> draw. min_p keeps the tokens whose tempered probability
// is >= min_p times the largest one; it commutes with top_k, and top_p then takes its nucleus of the
// mass that min_p and top_k left (renormalised).
//
// Log probabilities (`logprob` of the chosen token and the `top` alternatives) are always the
// log-softmax of the RAW logits: before penalties, temperature, min_p, top-k and top-p. They describe
// what the model predicted rather than what this request's knobs did to it, stay meaningful for
// greedy decoding (where the tempered distribution is degenerate), are comparable across requests
// with different settings, and match what OpenAI-style APIs and vLLM (logprobs_mode "raw_logprobs",
// its default) report. A consequence: a sampled token's logprob can be far below that of a
// filtered-out or penalized alternative, and a token masked with -Infinity has logprob -Infinity.
//
// Structured output (allowed-tokens.ts) hands a row a bitmask of the ids its grammar allows: the others
// get -Infinity before penalties, temperature and the rest, so a masked token is never sampled, while
// the logprobs stay those of the raw logits, taken before the mask (the masked entries of `logits` are
// left at -Infinity: a constrained row's logits are consumed by its sampling).
//
// Penalties are applied without copying the vocabulary: `sample` writes the penalized values of the
// few touched ids into the caller's `logits` for the duration of the call and writes the raw values
// back before it returns or throws. The caller must not read that array concurrently (another thread
// over a SharedArrayBuffer) while `sample` runs.

import { MAX_PENALTY } from "../../inference/sampling-params.ts";
import type { GeneratedToken, SamplingParams, TokenLogprob } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { maskDisallowed } from "./allowed-tokens.ts";
import { expNonPositive } from "./fast-exp.ts";
import { heldBackIds, holdBack } from "./held-back.ts";
import { addBias, type LogitBias, logitBiasArrays } from "./logit-bias.ts";
import { selectNucleus } from "./nucleus.ts";
import {
  collectListed,
  hasPenalties,
  type Penalties,
  PenaltyScratch,
  type TokenHistory,
} from "./penalties.ts";
import { CounterRng } from "./philox.ts";
import { topKIndices } from "./top-k.ts";

// Scratch for the candidate set, shared by all samplers of this thread: `sample` is synchronous and
// never re-entered, and one vocabulary-sized buffer per live request would cost megabytes each.
let scratchIds = new Int32Array(0);
let scratchWeights = new Float64Array(0);

function scratch(n: number): { ids: Int32Array; weights: Float64Array } {
  if (scratchIds.length < n) {
    scratchIds = new Int32Array(n);
    scratchWeights = new Float64Array(n);
  }
  return { ids: scratchIds, weights: scratchWeights };
}

const penaltyScratch = new PenaltyScratch();

/** Maximum and its first index; throws on NaN. argmax is -1 when every entry is -Infinity (or none). */
function scanMax(logits: Float32Array): { max: number; argmax: number } {
  const n = logits.length;
  let max = Number.NEGATIVE_INFINITY;
  let argmax = -1;
  for (let i = 0; i < n; i++) {
    const v = logits[i]!;
    if (v > max) {
      max = v;
      argmax = i;
    } else if (Number.isNaN(v)) {
      throw new TesseraError(Code.INTERNAL, `sampler: logit ${i} is NaN`);
    }
  }
  return { max, argmax };
}

/** sum(exp(x - shift)) for a shift >= every entry. */
function sumExp(logits: Float32Array, shift: number): number {
  const n = logits.length;
  let sum = 0;
  for (let i = 0; i < n; i++) sum += expNonPositive(logits[i]! - shift);
  return sum;
}

function noFiniteMaximum(): TesseraError {
  return new TesseraError(Code.INTERNAL, "sampler: logits have no finite maximum");
}

/** Maximum and its first index; throws on NaN, +Infinity or no finite value. */
function finiteMax(logits: Float32Array): { max: number; argmax: number } {
  const found = scanMax(logits);
  if (found.argmax < 0 || found.max === Number.POSITIVE_INFINITY) throw noFiniteMaximum();
  return found;
}

/** Maximum, its first index, and log(sum(exp(x))) of the logits; throws on NaN, +Infinity or no finite value. */
export function logitStats(logits: Float32Array): { max: number; argmax: number; logSumExp: number } {
  const { max, argmax } = finiteMax(logits);
  return { max, argmax, logSumExp: max + Math.log(sumExp(logits, max)) };
}

/** The knobs that pick a token from one row of logits (SamplingParams' subset, min_p resolved). */
interface Knobs {
  temperature: number;
  topK: number;
  topP: number;
  minP: number;
  logprobs: number;
}

/**
 * Everything that sampling one row needs besides its logits, for a sampler where the logits are (the
 * last pipeline stage of a parallel replica): the request's knobs, the uniform number of this token's
 * position under the request's seed, and the ids its penalties touch.
 * `sampleRow(logits, Sampler.prepare(position, history))` picks what
 * `Sampler.sample(logits, position, history)` would.
 */
export interface RowSampling extends Knobs, Penalties {
  /** The token's draw in [0, 1) (CounterRng.uniform of its position); 0 when greedy (nothing is drawn). */
  draw: number;
  /** Ids the penalties touch (TokenHistory.touched); empty when no penalty is on. */
  penaltyIds: Int32Array;
  /** How often each of penaltyIds was generated (0: in the prompt only). */
  penaltyCounts: Int32Array;
  /** Ids that cannot be picked at this position (eos and stop ids before min_tokens); usually empty. */
  heldBackIds: Int32Array;
  /** Structured output: the bitmask of the ids that may be picked (allowed-tokens.ts); unset = all. */
  allowed?: Int32Array | undefined;
  /** logit_bias (logit-bias.ts): ids and the bias added to each; usually empty. */
  biasIds: Int32Array;
  biasValues: Float32Array;
}

/** Picks the token of one row from a RowSampling (made by Sampler.prepare, here or in another process). */
export function sampleRow(logits: Float32Array, row: RowSampling): GeneratedToken {
  const raw = row.allowed && rawBeforeMask(logits, row.allowed, row.logprobs);
  let touched =
    row.penaltyIds.length > 0
      ? collectListed(logits, { ids: row.penaltyIds, counts: row.penaltyCounts }, row, penaltyScratch)
      : 0;
  if (row.biasIds.length > 0)
    touched = addBias(logits, { ids: row.biasIds, values: row.biasValues }, penaltyScratch, touched);
  if (row.heldBackIds.length > 0) touched = holdBack(logits, row.heldBackIds, penaltyScratch, touched);
  return raw
    ? withRaw(logits, pickId(logits, row, row.draw, touched), raw)
    : sampleKnobs(logits, row, row.draw, touched);
}

/** The raw log-sum-exp and top alternatives of a row, taken before its mask is applied (in place). */
interface RawStats {
  logSumExp: number;
  top: TokenLogprob[];
}

function rawBeforeMask(logits: Float32Array, allowed: Int32Array, logprobs: number): RawStats {
  const { logSumExp } = logitStats(logits);
  const top: TokenLogprob[] = [];
  if (logprobs > 0) {
    for (const id of topKIndices(logits, logprobs))
      top.push({ tokenId: id, logprob: logits[id]! - logSumExp });
  }
  maskDisallowed(logits, allowed);
  return { logSumExp, top };
}

/** The picked token with the raw logprobs (an allowed id's logit is its raw one again after sampling). */
function withRaw(logits: Float32Array, tokenId: number, raw: RawStats): GeneratedToken {
  return { tokenId, logprob: logits[tokenId]! - raw.logSumExp, top: raw.top };
}

/** What a Sampler needs beside the request's parameters when min_tokens is on. */
export interface SamplerContext {
  /** The model's eos ids (held back with stop_token_ids until min_tokens tokens were generated). */
  eosTokenIds?: readonly number[] | undefined;
  /** The request's prompt length: the token at position p is its (p - promptLength)-th generated one. */
  promptLength?: number | undefined;
}

/**
 * Samples the tokens of one request. Create one per request, from parameters checked by
 * parseSamplingParams (and, with min_tokens, the model's eos ids and the prompt length). When
 * `usesHistory` is true (a penalty is on), pass the request's TokenHistory to every `sample` (or
 * `prepare`) call and append each generated token to it.
 */
export class Sampler {
  readonly params: SamplingParams;
  /** The seed of this request's draws (drawn from crypto when the request gave none), for logs and replays. */
  readonly seed: bigint;
  /** Whether a penalty is on: `sample` then needs the request's TokenHistory. */
  readonly usesHistory: boolean;
  readonly #rng: CounterRng;
  readonly #knobs: Knobs;
  readonly #penalties: Penalties;
  /** Whether a token takes a draw: when the temperature is in use, else never. */
  readonly #draws: boolean;
  /** Ids held back before position #holdUntil (empty when min_tokens is off). */
  readonly #heldBack: Int32Array;
  readonly #holdUntil: number;
  readonly #bias: LogitBias;

  constructor(params: SamplingParams, context: SamplerContext = {}) {
    const { temperature, topP, topK, logprobs } = params;
    // Missing (undefined) min_p and penalties are read as off: SamplingParams literals written before
    // those fields existed keep working at run time.
    const minP = params.minP ?? 0;
    const repetition = params.repetitionPenalty ?? 1;
    const presence = params.presencePenalty ?? 0;
    const frequency = params.frequencyPenalty ?? 0;
    if (!(Number.isFinite(temperature) && temperature >= 0)) {
      throw TesseraError.invalidArgument("temperature", "must be a finite number >= 0");
    }
    if (!(topP > 0 && topP <= 1)) throw TesseraError.invalidArgument("top_p", "must be in (0, 1]");
    if (!(Number.isInteger(topK) && topK >= 0)) throw TesseraError.invalidArgument("top_k", "must be >= 0");
    if (!(minP >= 0 && minP <= 1)) throw TesseraError.invalidArgument("min_p", "must be in [0, 1]");
    if (!(Number.isFinite(repetition) && repetition > 0)) {
      throw TesseraError.invalidArgument("repetition_penalty", "must be > 0");
    }
    if (!(Math.abs(presence) <= MAX_PENALTY)) {
      throw TesseraError.invalidArgument("presence_penalty", `must be in [-${MAX_PENALTY}, ${MAX_PENALTY}]`);
    }
    if (!(Math.abs(frequency) <= MAX_PENALTY)) {
      throw TesseraError.invalidArgument("frequency_penalty", `must be in [-${MAX_PENALTY}, ${MAX_PENALTY}]`);
    }
    if (!(Number.isInteger(logprobs) && logprobs >= 0)) {
      throw TesseraError.invalidArgument("logprobs", "must be >= 0");
    }
    const minTokens = params.minTokens ?? 0;
    if (!(Number.isInteger(minTokens) && minTokens >= 0)) {
      throw TesseraError.invalidArgument("min_tokens", "must be an integer >= 0");
    }
    if (minTokens > 0 && context.promptLength === undefined) {
      throw new TesseraError(Code.INTERNAL, "sampler: min_tokens needs the request's prompt length");
    }
    this.#heldBack = heldBackIds(params, context.eosTokenIds ?? []);
    this.#holdUntil = (context.promptLength ?? 0) + minTokens;
    this.#bias = logitBiasArrays(params.logitBias);
    this.params = params;
    this.#knobs = { temperature, topK, topP, minP, logprobs };
    this.#penalties = { repetition, presence, frequency };
    this.usesHistory = hasPenalties(this.#penalties);
    this.#draws = !isGreedy(temperature);
    this.#rng = params.seed === undefined ? CounterRng.random() : new CounterRng(params.seed);
    this.seed = this.#rng.seed;
  }

  /**
   * Picks the token at `position` (its index in prompt + output: the number of tokens before it) from
   * the logits that predict it (length = vocabulary size). `history` (the request's prompt and output
   * so far) is required when `usesHistory`, ignored otherwise. It is not modified: append the
   * returned token to it yourself. Sampling the same position twice draws the same number.
   */
  sample(
    logits: Float32Array,
    position: number,
    history?: TokenHistory,
    allowed?: Int32Array,
  ): GeneratedToken {
    const u = this.#drawAt(position);
    const raw = allowed && rawBeforeMask(logits, allowed, this.#knobs.logprobs);
    let touched = this.usesHistory
      ? this.#history(history).collect(logits, this.#penalties, penaltyScratch)
      : 0;
    if (this.#bias.ids.length > 0) touched = addBias(logits, this.#bias, penaltyScratch, touched);
    const held = this.#heldAt(position);
    if (held.length > 0) touched = holdBack(logits, held, penaltyScratch, touched);
    return raw
      ? withRaw(logits, pickId(logits, this.#knobs, u, touched), raw)
      : sampleKnobs(logits, this.#knobs, u, touched);
  }

  /**
   * What `sampleRow` needs to pick this request's token at `position` elsewhere, in place of `sample`
   * (the same draw, the same penalized ids).
   */
  prepare(position: number, history?: TokenHistory, allowed?: Int32Array): RowSampling {
    const draw = this.#drawAt(position);
    const listed = this.usesHistory ? this.#history(history).touched(this.#penalties) : NO_PENALTIES;
    return {
      ...this.#knobs,
      ...this.#penalties,
      draw,
      penaltyIds: listed.ids,
      penaltyCounts: listed.counts,
      heldBackIds: this.#heldAt(position),
      ...(allowed && { allowed }),
      biasIds: this.#bias.ids,
      biasValues: this.#bias.values,
    };
  }

  /**
   * The distribution `sample` draws from at `position`, after penalties, logit_bias, held-back ids
   * (in sample's order), temperature, min_p, top_k and top_p: candidate ids and their probabilities
   * (summing to 1); greedy puts all of it on the argmax. Speculative decoding's rejection sampling weighs
   * proposals with it. No structured-output mask: a constrained request is never speculated.
   */
  distribution(logits: Float32Array, position: number, history?: TokenHistory): TokenDistribution {
    let touched = this.usesHistory
      ? this.#history(history).collect(logits, this.#penalties, penaltyScratch)
      : 0;
    if (this.#bias.ids.length > 0) touched = addBias(logits, this.#bias, penaltyScratch, touched);
    const held = this.#heldAt(position);
    if (held.length > 0) touched = holdBack(logits, held, penaltyScratch, touched);
    const { ids, raw, penalized } = penaltyScratch;
    for (let i = 0; i < touched; i++) logits[ids[i]!] = penalized[i]!;
    try {
      const { max, argmax } = finiteMax(logits);
      if (isGreedy(this.#knobs.temperature)) return { ids: Int32Array.of(argmax), probs: Float64Array.of(1) };
      const c = candidates(logits, max, this.#knobs);
      const out = { ids: c.ids.slice(0, c.n), probs: new Float64Array(c.n) };
      for (let i = 0; i < c.n; i++) out.probs[i] = c.weights[i]! / c.total;
      return out;
    } finally {
      for (let i = 0; i < touched; i++) logits[ids[i]!] = raw[i]!;
    }
  }

  /** The ids held back at `position`: every eos and stop id while fewer than min_tokens were generated. */
  #heldAt(position: number): Int32Array {
    return position < this.#holdUntil ? this.#heldBack : NOTHING_HELD;
  }

  #drawAt(position: number): number {
    return this.#draws ? this.#rng.uniform(position) : 0;
  }

  #history(history: TokenHistory | undefined): TokenHistory {
    if (history === undefined) {
      throw new TesseraError(Code.INTERNAL, "sampler: this request has penalties: pass its TokenHistory");
    }
    return history;
  }
}

/** A sparse distribution over token ids: the ids with probability > 0 and their probabilities. */
export interface TokenDistribution {
  ids: Int32Array;
  probs: Float64Array;
}

/** `tokenId` as `sample` reports a token it picked from these raw logits: its logprob and the top ones. */
export function scoreToken(logits: Float32Array, tokenId: number, logprobs: number): GeneratedToken {
  return result(logits, tokenId, logitStats(logits).logSumExp, logprobs);
}

const NO_PENALTIES = { ids: new Int32Array(0), counts: new Int32Array(0) };
const NOTHING_HELD = new Int32Array(0);

/** A temperature so small that 1/T overflows is greedy in all but name. */
function isGreedy(temperature: number): boolean {
  return temperature === 0 || !Number.isFinite(1 / temperature);
}

/** Picks a token with `u` as the step's draw; `touched` ids of penaltyScratch are penalized. */
function sampleKnobs(logits: Float32Array, knobs: Knobs, u: number, touched: number): GeneratedToken {
  if (touched > 0) return samplePenalized(logits, knobs, u, touched);
  const { max, argmax } = finiteMax(logits);
  const tokenId = choose(logits, max, argmax, knobs, u);
  // When `choose` weighed every logit with exp(logit - max), its sum of them is the log-sum-exp's,
  // the same terms in the same order, bit for bit: a second exp pass over the vocabulary is saved.
  const sum = Number.isNaN(fullWeightSum) ? sumExp(logits, max) : fullWeightSum;
  return result(logits, tokenId, max + Math.log(sum), knobs.logprobs);
}

/**
 * The id `sampleKnobs` picks, without the log-sum-exp and the alternatives it reports: a masked row
 * reports those of its raw logits (rawBeforeMask), so its masked ones would be a wasted pass of exp over
 * the vocabulary, which doubled the sampler's time per constrained row (issue 18, bench engine g).
 */
function pickId(logits: Float32Array, knobs: Knobs, u: number, touched: number): number {
  if (touched > 0) return samplePenalized(logits, knobs, u, touched).tokenId;
  const { max, argmax } = finiteMax(logits);
  return choose(logits, max, argmax, knobs, u);
}

/**
 * Left by the last `choose`: the sum of exp(logit - max) over the whole vocabulary when it computed
 * exactly that (temperature 1, the default of OpenAI-style APIs, no min_p, no top-k), else NaN.
 */
let fullWeightSum = Number.NaN;

/**
 * `sampleKnobs` with the `n` touched ids of penaltyScratch. Same two passes over the vocabulary as
 * without penalties: the touched ids are masked with -Infinity while the untouched maximum and sum
 * are taken, then both the raw statistics (for logprobs) and the penalized maximum follow from
 * those and the touched values alone.
 */
function samplePenalized(logits: Float32Array, knobs: Knobs, u: number, n: number): GeneratedToken {
  const { ids, raw, penalized } = penaltyScratch;
  let rawMax = Number.NEGATIVE_INFINITY;
  for (let i = 0; i < n; i++) {
    const r = raw[i]!;
    if (Number.isNaN(r)) throw new TesseraError(Code.INTERNAL, `sampler: logit ${ids[i]} is NaN`);
    if (r > rawMax) rawMax = r;
  }
  if (rawMax === Number.POSITIVE_INFINITY) throw noFiniteMaximum();

  let tokenId: number;
  let logSumExp: number;
  for (let i = 0; i < n; i++) logits[ids[i]!] = Number.NEGATIVE_INFINITY;
  try {
    const untouched = scanMax(logits);
    if (untouched.max === Number.POSITIVE_INFINITY) throw noFiniteMaximum();
    if (untouched.max > rawMax) rawMax = untouched.max;
    if (rawMax === Number.NEGATIVE_INFINITY) throw noFiniteMaximum();
    let sum = sumExp(logits, rawMax);
    for (let i = 0; i < n; i++) sum += expNonPositive(raw[i]! - rawMax);
    logSumExp = rawMax + Math.log(sum);

    // Penalized maximum, first index on ties; finite unless every finite logit was held back
    // (min_tokens), since a penalized finite raw logit stays finite.
    let { max, argmax } = untouched;
    for (let i = 0; i < n; i++) {
      const v = penalized[i]!;
      const id = ids[i]!;
      if (v > max || (v === max && (argmax < 0 || id < argmax))) {
        max = v;
        argmax = id;
      }
      logits[id] = v;
    }
    if (max === Number.NEGATIVE_INFINITY) {
      throw new TesseraError(
        Code.INTERNAL,
        "sampler: every token with a finite logit is held back (min_tokens)",
      );
    }
    tokenId = choose(logits, max, argmax, knobs, u);
  } finally {
    for (let i = 0; i < n; i++) logits[ids[i]!] = raw[i]!;
  }
  return result(logits, tokenId, logSumExp, knobs.logprobs);
}

function result(logits: Float32Array, tokenId: number, logSumExp: number, logprobs: number): GeneratedToken {
  const top: TokenLogprob[] = [];
  if (logprobs > 0) {
    for (const id of topKIndices(logits, logprobs))
      top.push({ tokenId: id, logprob: logits[id]! - logSumExp });
  }
  return { tokenId, logprob: logits[tokenId]! - logSumExp, top };
}

function choose(logits: Float32Array, max: number, argmax: number, knobs: Knobs, u: number): number {
  fullWeightSum = Number.NaN;
  if (isGreedy(knobs.temperature)) return argmax;
  const { ids, weights, n, total } = candidates(logits, max, knobs);
  return draw(ids, weights, n, total, u, logits.length) ?? argmax;
}

/** The tokens `choose` draws from (in the shared scratch) and their weights, for a temperature in use. */
function candidates(
  logits: Float32Array,
  max: number,
  knobs: Knobs,
): { ids: Int32Array; weights: Float64Array; n: number; total: number } {
  const { temperature, topK, topP, minP } = knobs;
  const invT = 1 / temperature;

  // Weights are exp((logit - max) / T): the most likely token weighs 1, so min_p keeps weights >= minP.
  const vocab = logits.length;
  let n: number;
  let ids: Int32Array;
  let weights: Float64Array;
  let total = 0;
  if (topK > 0 && topK < vocab) {
    const kept = topKIndices(logits, topK);
    ({ ids, weights } = scratch(kept.length));
    n = 0;
    for (let i = 0; i < kept.length; i++) {
      const id = kept[i]!;
      const w = expNonPositive((logits[id]! - max) * invT);
      if (w < minP) break; // kept is sorted, heaviest first
      ids[n] = id;
      weights[n] = w;
      total += w;
      n++;
    }
  } else {
    // Keep only tokens that can matter: those of weight >= minP, and > 0. With top-p also those of
    // weight >= (1 - topP) / vocab: the dropped ones weigh less than (1 - topP) together, and the
    // total that top-p applies to (of the weights >= minP) is >= 1 (the maximum has weight 1), so
    // the kept ones, all heavier than the dropped ones, already reach topP * total: the nucleus
    // lies among them. For a peaked distribution this shrinks 150k candidates to a few hundred.
    const minWeight = Math.max(minP, topP < 1 ? (1 - topP) / vocab : Number.MIN_VALUE);
    ({ ids, weights } = scratch(vocab));
    n = 0;
    for (let id = 0; id < vocab; id++) {
      const w = expNonPositive((logits[id]! - max) * invT);
      if (w >= minP) total += w;
      if (w >= minWeight) {
        ids[n] = id;
        weights[n] = w;
        n++;
      }
    }
    if (invT === 1 && minP === 0) fullWeightSum = total;
  }
  if (topP < 1) {
    n = selectNucleus(ids, weights, n, topP * total);
    total = 0;
    for (let i = 0; i < n; i++) total += weights[i]!;
  }
  return { ids, weights, n, total };
}

// Scratch for drawing in token-id order: weights by id (all zero between draws) and an index order.
let byIdWeights = new Float64Array(0);
let order = new Int32Array(0);
let sortedIds = new Int32Array(0);
let sortedWeights = new Float64Array(0);
/** Candidates up to this many are sorted by id; more are scattered into a vocabulary-sized array. */
const SORT_LIMIT = 512;

/**
 * Inverse-CDF draw over the first `n` candidates taken in token-id order; undefined when they carry no
 * weight. Id order, not the order selection left them in (top-k's heaviest first, the nucleus
 * quickselect's pivot order): that order follows the weights' exact values, so a logit moved by
 * float rounding (a step batched with other rows, a speculative verify step of k + 1 rows: ~4e-6 on the
 * trained model) could swap two near-equal candidates and move the draw onto another token. In id
 * order a seeded draw changes only when rounding moves a boundary across the drawn point, so a seeded
 * request gets its tokens whatever it was batched with.
 */
function draw(
  ids: Int32Array,
  weights: Float64Array,
  n: number,
  total: number,
  u: number,
  vocab: number,
): number | undefined {
  const r = u * total;
  let inOrder = true;
  for (let i = 1; i < n && inOrder; i++) inOrder = ids[i]! > ids[i - 1]!;
  if (inOrder) return walk(ids, weights, n, r);
  if (n <= SORT_LIMIT) {
    sortById(ids, weights, n);
    return walk(ids, weights, n, r);
  }
  if (byIdWeights.length < vocab) byIdWeights = new Float64Array(vocab);
  let lo = vocab;
  let hi = 0;
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    byIdWeights[id] = weights[i]!;
    if (id < lo) lo = id;
    if (id > hi) hi = id;
  }
  let acc = 0;
  let last: number | undefined;
  let chosen: number | undefined;
  for (let id = lo; id <= hi; id++) {
    const w = byIdWeights[id]!;
    if (w <= 0) continue;
    acc += w;
    last = id;
    if (r < acc) {
      chosen = id;
      break;
    }
  }
  for (let i = 0; i < n; i++) byIdWeights[ids[i]!] = 0;
  return chosen ?? last;
}

/** The first candidate, in the arrays' order, whose running weight passes `r`. */
function walk(ids: Int32Array, weights: Float64Array, n: number, r: number): number | undefined {
  let acc = 0;
  let last: number | undefined;
  for (let i = 0; i < n; i++) {
    const w = weights[i]!;
    if (w <= 0) continue;
    acc += w;
    last = ids[i]!;
    if (r < acc) return last;
  }
  // Rounding left r at or above the running sum: take the last candidate with weight.
  return last;
}

/** Reorders the first `n` (<= SORT_LIMIT) candidates of the shared scratch by token id, in place. */
function sortById(ids: Int32Array, weights: Float64Array, n: number): void {
  if (order.length < SORT_LIMIT) {
    order = new Int32Array(SORT_LIMIT);
    sortedIds = new Int32Array(SORT_LIMIT);
    sortedWeights = new Float64Array(SORT_LIMIT);
  }
  const idx = order.subarray(0, n);
  for (let i = 0; i < n; i++) idx[i] = i;
  idx.sort((a, b) => ids[a]! - ids[b]!);
  for (let k = 0; k < n; k++) {
    sortedIds[k] = ids[idx[k]!]!;
    sortedWeights[k] = weights[idx[k]!]!;
  }
  ids.set(sortedIds.subarray(0, n));
  weights.set(sortedWeights.subarray(0, n));
}
