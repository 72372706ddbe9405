// One model's structured-output grammars: its vocabulary prepared for xgrammar once (TokenizerInfo,
// ~80 ms on a 128k-151k vocabulary, on the first constrained request), and each constraint compiled
// once and kept (a JSON schema takes ~20-35 ms on such a vocabulary, more on a loaded machine; requests
// with the same schema, the common case for an application, reuse it). Both run on the event loop.
import type { CompiledGrammar, GrammarCompiler, TokenizerInfo } from "@mlc-ai/web-xgrammar";
import {
  type GrammarSource,
  grammarKey,
  grammarSource,
  JSON_LAYOUT,
} from "../../inference/grammar/grammar-source.ts";
import { explained, xgrammarReady } from "../../inference/grammar/xgrammar.ts";
import type { StructuredOutput } from "../../inference/types.ts";
import { TesseraError } from "../../kernel/errors.ts";
import { Constraint } from "./constraint.ts";
import { readVocabulary } from "./vocabulary.ts";

/** Compiled grammars kept per model (least recently used dropped first). */
const MAX_COMPILED = 64;

export interface GrammarsOptions {
  modelDir: string;
  /** Rows of the model's logits (config.json's vocab_size): ids past the tokenizer's are never allowed. */
  vocabSize: number;
  /** The ids that end a generation: allowed where the grammar can end. */
  eosTokenIds: readonly number[];
}

interface Prepared {
  compiler: GrammarCompiler;
  info: TokenizerInfo;
  /** Ids a mask covers: the model's rows, or the tokenizer's ids where it has more. */
  maskSize: number;
}

export class Grammars {
  readonly options: GrammarsOptions;
  #compiler: Promise<Prepared> | undefined;
  readonly #compiled = new Map<string, Promise<CompiledGrammar>>();

  constructor(options: GrammarsOptions) {
    this.options = options;
  }

  /**
   * A matcher for one request, past its `matched` tokens (a continuation's output so far).
   * INVALID_ARGUMENT naming `structured` when the constraint does not compile or the tokens leave it.
   */
  async open(s: StructuredOutput, matched: readonly number[] = []): Promise<Constraint> {
    const compiled = await this.compile(s);
    const { maskSize } = await this.#prepared();
    const xg = await xgrammarReady();
    const matcher = await xg.GrammarMatcher.createGrammarMatcher(compiled, [...this.options.eosTokenIds]);
    const constraint = new Constraint(matcher, maskSize, this.options.eosTokenIds);
    for (const id of matched) {
      if (!constraint.accept(id)) {
        constraint.dispose();
        throw TesseraError.invalidArgument(
          "structured.matched_tokens",
          `token ${id} of the output so far does not match the constraint`,
        );
      }
    }
    return constraint;
  }

  /** The compiled grammar of a constraint (cached by its source). */
  compile(s: StructuredOutput): Promise<CompiledGrammar> {
    const source = grammarSource(s);
    if ("error" in source) return Promise.reject(TesseraError.invalidArgument("structured", source.error));
    const key = grammarKey(source.value);
    const cached = this.#compiled.get(key);
    if (cached) {
      this.#compiled.delete(key);
      this.#compiled.set(key, cached);
      return cached;
    }
    const compiling = this.#compile(source.value);
    this.#compiled.set(key, compiling);
    compiling.catch(() => this.#compiled.delete(key));
    while (this.#compiled.size > MAX_COMPILED) {
      const [oldest, grammar] = this.#compiled.entries().next().value!;
      this.#compiled.delete(oldest);
      // Live matchers hold the grammar themselves (xgrammar shares it by reference count).
      void grammar.then((g) => g.dispose()).catch(() => {});
    }
    return compiling;
  }

  async #compile(source: GrammarSource): Promise<CompiledGrammar> {
    const { compiler } = await this.#prepared();
    const { anyWhitespace, indent, separators } = JSON_LAYOUT;
    const compiled = await explained(() =>
      source.type === "ebnf"
        ? compiler.compileGrammar(source.ebnf)
        : compiler.compileJSONSchema(source.schema, anyWhitespace, indent, separators, source.strict),
    );
    if ("error" in compiled) throw TesseraError.invalidArgument("structured", compiled.error);
    return compiled.value;
  }

  #prepared(): Promise<Prepared> {
    this.#compiler ??= (async () => {
      const { modelDir, vocabSize, eosTokenIds } = this.options;
      const vocab = readVocabulary(modelDir);
      const xg = await xgrammarReady();
      const maskSize = Math.max(vocabSize, vocab.tokens.length);
      const info = await xg.TokenizerInfo.createTokenizerInfo(
        vocab.tokens,
        vocab.type,
        vocab.prependSpace,
        maskSize,
        [...eosTokenIds],
      );
      return { compiler: await xg.GrammarCompiler.createGrammarCompiler(info), info, maskSize };
    })();
    return this.#compiler;
  }
}
