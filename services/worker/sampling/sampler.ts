// Per-request token sampler: greedy, or temperature + top-k + top-p and a draw from the request's
// own seeded stream.
//
// Log probabilities (`logprob` of the chosen token and the `top` alternatives) are always the
// log-softmax of the RAW logits: before temperature, top-k and top-p. They describe what the model
// predicted rather than what this request's knobs did to it, stay meaningful for greedy decoding
// (where the tempered distribution is degenerate), are comparable across requests with different
// settings, and match what OpenAI-style APIs and vLLM report by default. A consequence: a sampled
// token's logprob can be far below that of a filtered-out alternative, and a token masked with
// -Infinity has logprob -Infinity.
import { Code, TesseraError } from "../../common/errors.ts";
import type { GeneratedToken, SamplingParams, TokenLogprob } from "../engine/types.ts";
import { expNonPositive } from "./fast-exp.ts";
import { selectNucleus } from "./nucleus.ts";
import { Rng } from "./rng.ts";
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

/** Maximum, its first index, and log(sum(exp(x))) of the logits; throws on NaN, +Infinity or no finite value. */
export function logitStats(logits: Float32Array): { max: number; argmax: number; logSumExp: number } {
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
  if (argmax < 0 || max === Number.POSITIVE_INFINITY) {
    throw new TesseraError(Code.INTERNAL, "sampler: logits have no finite maximum");
  }
  let sum = 0;
  for (let i = 0; i < n; i++) sum += expNonPositive(logits[i]! - max);
  return { max, argmax, logSumExp: max + Math.log(sum) };
}

/** Samples the tokens of one request. Create one per request, from parameters checked by parseSamplingParams. */
export class Sampler {
  readonly params: SamplingParams;
  /** The seed of this request's stream (drawn from crypto when the request gave none), for logs and replays. */
  readonly seed: bigint;
  readonly #rng: Rng;

  constructor(params: SamplingParams) {
    const { temperature, topP, topK, logprobs } = params;
    if (!(Number.isFinite(temperature) && temperature >= 0)) {
      throw TesseraError.invalidArgument("temperature", "must be a finite number >= 0");
    }
    if (!(topP > 0 && topP <= 1)) throw TesseraError.invalidArgument("top_p", "must be in (0, 1]");
    if (!(Number.isInteger(topK) && topK >= 0)) throw TesseraError.invalidArgument("top_k", "must be >= 0");
    if (!(Number.isInteger(logprobs) && logprobs >= 0)) {
      throw TesseraError.invalidArgument("logprobs", "must be >= 0");
    }
    this.params = params;
    this.#rng = params.seed === undefined ? Rng.random() : new Rng(params.seed);
    this.seed = this.#rng.seed;
  }

  /** Picks the next token from one position's logits (length = vocabulary size). */
  sample(logits: Float32Array): GeneratedToken {
    const stats = logitStats(logits);
    const tokenId = this.#choose(logits, stats.max, stats.argmax);

    const n = this.params.logprobs;
    const top: TokenLogprob[] = [];
    if (n > 0) {
      for (const id of topKIndices(logits, n))
        top.push({ tokenId: id, logprob: logits[id]! - stats.logSumExp });
    }
    return { tokenId, logprob: logits[tokenId]! - stats.logSumExp, top };
  }

  #choose(logits: Float32Array, max: number, argmax: number): number {
    const { temperature, topK, topP } = this.params;
    const invT = 1 / temperature;
    // A temperature so small that 1/T overflows is greedy in all but name.
    if (temperature === 0 || !Number.isFinite(invT)) return argmax;

    const vocab = logits.length;
    let n: number;
    let ids: Int32Array;
    let weights: Float64Array;
    let total = 0;
    if (topK > 0 && topK < vocab) {
      const kept = topKIndices(logits, topK);
      ({ ids, weights } = scratch(kept.length));
      n = kept.length;
      for (let i = 0; i < n; i++) {
        const id = kept[i]!;
        const w = expNonPositive((logits[id]! - max) * invT);
        ids[i] = id;
        weights[i] = w;
        total += w;
      }
    } else {
      // Keep only tokens that can matter. Without top-p: those of weight > 0. With top-p: those of
      // weight >= (1 - topP) / vocab. The dropped ones weigh less than (1 - topP) together, and the
      // total is >= 1 (the maximum has weight 1), so the kept ones, all heavier than the dropped ones,
      // already reach topP * total: the nucleus lies among them. For a peaked distribution this
      // shrinks 150k candidates to a few hundred.
      const minWeight = topP < 1 ? (1 - topP) / vocab : Number.MIN_VALUE;
      ({ ids, weights } = scratch(vocab));
      n = 0;
      for (let id = 0; id < vocab; id++) {
        const w = expNonPositive((logits[id]! - max) * invT);
        total += w;
        if (w >= minWeight) {
          ids[n] = id;
          weights[n] = w;
          n++;
        }
      }
    }
    if (topP < 1) {
      n = selectNucleus(ids, weights, n, topP * total);
      total = 0;
      for (let i = 0; i < n; i++) total += weights[i]!;
    }
    return draw(ids, weights, n, total, this.#rng.nextFloat()) ?? argmax;
  }
}

/** Inverse-CDF draw over the first `n` candidates; undefined when they carry no weight. */
function draw(
  ids: Int32Array,
  weights: Float64Array,
  n: number,
  total: number,
  u: number,
): number | undefined {
  const r = u * total;
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
