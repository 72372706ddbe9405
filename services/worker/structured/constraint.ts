// One request's structured output while it generates: xgrammar's matcher (a pushdown automaton over the
// grammar, advanced by each sampled token) and the mask of the ids it allows next. The engine fills the
// mask while the model computes the step (engine-core.ts), so it costs the step nothing in the common
// case, samples with it, and accepts the token. A grammar is complete when it allows nothing but the
// end of the generation: the request then finishes with reason stop without spending a token on eos.
import type { GrammarMatcher } from "@mlc-ai/web-xgrammar";
import { fillNextTokenBitmask } from "../../inference/grammar/xgrammar.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { allowedIds } from "../sampling/allowed-tokens.ts";

export class Constraint {
  readonly #matcher: GrammarMatcher;
  readonly #vocabSize: number;
  readonly #eos: ReadonlySet<number>;
  readonly #mask: Int32Array;
  #fresh = false;
  #complete = false;
  #disposed = false;

  constructor(matcher: GrammarMatcher, vocabSize: number, eosTokenIds: readonly number[]) {
    this.#matcher = matcher;
    this.#vocabSize = vocabSize;
    this.#eos = new Set(eosTokenIds);
    this.#mask = new Int32Array(Math.ceil(vocabSize / 32));
  }

  /** The mask of the next token (bit set = allowed), filled now unless it already is. */
  mask(): Int32Array {
    if (this.#disposed) throw new TesseraError(Code.INTERNAL, "structured output: the matcher was disposed");
    if (!this.#fresh) {
      fillNextTokenBitmask(this.#matcher, this.#vocabSize, this.#mask);
      // Complete: at most a few ids allowed, all of them eos (a grammar's end allows exactly those).
      const few = allowedIds(this.#mask, this.#vocabSize, this.#eos.size + 1);
      this.#complete = few.length > 0 && few.length <= this.#eos.size && few.every((id) => this.#eos.has(id));
      this.#fresh = true;
    }
    return this.#mask;
  }

  /** Whether the output so far is a whole match that nothing may extend (after mask()). */
  get complete(): boolean {
    return this.#complete;
  }

  /** Whether the matcher accepted an end of generation (eos). */
  get terminated(): boolean {
    return this.#matcher.isTerminated();
  }

  /** Advances past a generated token; false when the grammar does not allow it. */
  accept(tokenId: number): boolean {
    this.#fresh = false;
    return this.#matcher.acceptToken(tokenId);
  }

  /** Frees the matcher's WebAssembly memory (once the request finished). */
  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    this.#matcher.dispose();
  }
}
