// Stop strings over a streamed text: emits what is decided, holds back what might still become a
// stop string, and cuts the output just before the first stop string.
//
// "First" means the stop string that is complete earliest in the text (the smallest end position;
// among those ending together, the one starting first). That is what token-by-token generation
// sees, so the result is the same however the text is split into deltas: with stops "bc" and "abcd",
// text "abcd" stops after "a" whether it arrives whole or one character at a time.
//
// Matching is on UTF-16 code units, exact and case-sensitive (no Unicode normalisation). A lone high
// surrogate at the end of a delta is held back too, so emitted text never splits a surrogate pair.

export interface StopStringResult {
  /** Text that may be emitted now (possibly empty). */
  text: string;
  /** true once a stop string was matched: generation should end, later deltas are dropped. */
  stopped: boolean;
}

export class StopStringMatcher {
  readonly #stops: readonly string[];
  #held = "";
  #matched: string | undefined;

  /** `stops` are non-empty strings (see parseSamplingParams); an empty list passes all text through. */
  constructor(stops: readonly string[]) {
    if (stops.some((s) => s.length === 0)) throw new RangeError("stop strings must not be empty");
    this.#stops = [...stops];
  }

  /** true once a stop string has been matched. */
  get stopped(): boolean {
    return this.#matched !== undefined;
  }

  /** The stop string that ended the text, if any. */
  get matched(): string | undefined {
    return this.#matched;
  }

  /** Text received but not yet emitted (a possible start of a stop string). */
  get held(): string {
    return this.#held;
  }

  /** Feeds the next text delta; returns what can be emitted now and whether a stop string was hit. */
  push(delta: string): StopStringResult {
    if (this.#matched !== undefined) return { text: "", stopped: true };
    const heldLength = this.#held.length;
    const text = this.#held + delta;

    // The held text holds no complete stop string, so a match must end inside the delta.
    let bestStart = -1;
    let bestEnd = Number.POSITIVE_INFINITY;
    for (const stop of this.#stops) {
      const start = text.indexOf(stop, Math.max(0, heldLength - stop.length + 1));
      if (start < 0) continue;
      const end = start + stop.length;
      if (end < bestEnd || (end === bestEnd && start < bestStart)) {
        bestStart = start;
        bestEnd = end;
        this.#matched = stop;
      }
    }
    if (bestStart >= 0) {
      this.#held = "";
      return { text: text.slice(0, bestStart), stopped: true };
    }

    let keep = this.#longestPendingSuffix(text);
    if (keep < text.length && isHighSurrogate(text.charCodeAt(text.length - keep - 1))) keep++;
    this.#held = text.slice(text.length - keep);
    return { text: text.slice(0, text.length - keep), stopped: false };
  }

  /**
   * Ends the text: feeds a last delta (e.g. what the detokenizer releases at the end) and returns
   * everything still to emit, held text included. A stop string in it still cuts the text (check
   * `stopped`); after a stop string, returns "".
   */
  flush(lastDelta = ""): string {
    const { text, stopped } = this.push(lastDelta);
    if (stopped) return text;
    const rest = this.#held;
    this.#held = "";
    return text + rest;
  }

  /** Length of the longest suffix of `text` that is a proper prefix of some stop string. */
  #longestPendingSuffix(text: string): number {
    let best = 0;
    for (const stop of this.#stops) {
      for (let len = Math.min(stop.length - 1, text.length); len > best; len--) {
        if (suffixIsPrefix(text, stop, len)) {
          best = len;
          break;
        }
      }
    }
    return best;
  }
}

/** true when the last `len` code units of `text` equal the first `len` of `stop`. */
function suffixIsPrefix(text: string, stop: string, len: number): boolean {
  const offset = text.length - len;
  for (let j = 0; j < len; j++) {
    if (text.charCodeAt(offset + j) !== stop.charCodeAt(j)) return false;
  }
  return true;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}
