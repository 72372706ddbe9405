// Router-side detokenization: turns the token ids a worker streams into text exactly as the worker's
// output processor does (services/worker/engine/output-processor.ts): an eos or stop token id adds no
// text; other tokens go through the tokenizer's UTF-8-safe text stream and the stop-string matcher
// (text is held back while it may still become a stop string and cut before one); at the end the held
// text is released unless a stop string ended the generation. One detokenizer follows a request
// across the workers that produce it (prefill, decode, a migration), so the router, not a worker, sees
// every stop string, including one that straddles the point where a worker took over.
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { StopStringMatcher } from "../../inference/stop-strings.ts";
import type { SamplingParams } from "../../inference/types.ts";
import type { TextStream, Tokenizer } from "../../tokenizer/tokenizer.ts";

export class Detokenizer {
  readonly #text: TextStream;
  readonly #stops: StopStringMatcher;
  readonly #endIds: ReadonlySet<number>;
  /**
   * No stop strings: text the matcher would hand back unchanged skips it (no result object and no
   * slices per token). Only a delta ending in a high surrogate still goes through, to be held.
   */
  readonly #noStops: boolean;

  constructor(
    tokenizer: Tokenizer,
    sampling: SamplingParams,
    eosTokenIds: readonly number[],
    options: { skipSpecialTokens?: boolean | undefined } = {},
  ) {
    this.#text = tokenizer.textStream({ skipSpecialTokens: options.skipSpecialTokens === true });
    this.#stops = new StopStringMatcher(sampling.stop);
    this.#noStops = sampling.stop.length === 0;
    this.#endIds =
      sampling.stopTokenIds.length === 0
        ? eosSet(sampling.ignoreEos ? NO_IDS : eosTokenIds)
        : new Set([...sampling.stopTokenIds, ...(sampling.ignoreEos ? [] : eosTokenIds)]);
  }

  /** A stop string was matched: the generation is over, later tokens add nothing. */
  get stopped(): boolean {
    return this.#stops.stopped;
  }

  /** The text this token releases (maybe ""). */
  push(tokenId: number): string {
    if (this.#endIds.has(tokenId)) return "";
    const text = this.#text.push(tokenId);
    if (this.#noStops && this.#stops.held === "" && !endsInHighSurrogate(text)) return text;
    return this.#stops.push(text).text;
  }

  /** The text still held back when the generation ends for `reason`. */
  finish(reason: FinishReason): string {
    return reason === FinishReason.STOP_STRING ? "" : this.#stops.flush(this.#text.flush());
  }
}

const NO_IDS: readonly number[] = [];
/**
 * One set per model's eos ids, shared by its requests without stop token ids (most): a Set is
 * ~0.2 KB that a request would otherwise keep for its whole generation (issue 22). Never changed.
 */
const EOS_SETS = new WeakMap<readonly number[], ReadonlySet<number>>();

function eosSet(ids: readonly number[]): ReadonlySet<number> {
  const known = EOS_SETS.get(ids);
  if (known !== undefined) return known;
  const set = new Set(ids);
  EOS_SETS.set(ids, set);
  return set;
}

function endsInHighSurrogate(text: string): boolean {
  const last = text.charCodeAt(text.length - 1);
  return last >= 0xd800 && last < 0xdc00;
}
