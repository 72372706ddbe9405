// The contract between the engine (which runs a model) and its callers (gRPC service, CLI).
import type { RequestPhases } from "../kernel/telemetry/phase-spans.ts";

/** Why a generation ended. */
export type FinishReason = "stop" | "length" | "stop_string" | "context" | "cancelled";

/** Validated sampling and stopping parameters of one request (see sampling-params.ts). */
export interface SamplingParams {
  /** Tokens to generate, >= 1. */
  maxTokens: number;
  /** 0 = greedy. */
  temperature: number;
  /** 1 = off. */
  topP: number;
  /** 0 = off. */
  topK: number;
  /** In [0, 1]: drop tokens whose probability (after temperature) is below minP x the largest; 0 = off. */
  minP: number;
  /** > 0: logits of ids in the prompt or output are divided (if > 0) or multiplied by it; 1 = off. */
  repetitionPenalty: number;
  /** In [-2, 2]: subtracted from the logit of every id generated at least once; 0 = off. */
  presencePenalty: number;
  /** In [-2, 2]: times the number of times an id was generated, subtracted from its logit; 0 = off. */
  frequencyPenalty: number;
  /** Seed of this request's random stream; undefined = drawn at random. */
  seed: bigint | undefined;
  /** Stop strings: generation ends before them and they are not emitted. */
  stop: string[];
  /** Extra token ids that end generation. */
  stopTokenIds: number[];
  /** Do not stop on the model's eos ids. */
  ignoreEos: boolean;
  /**
   * In 0..maxTokens: until this many tokens were generated, the eos ids (unless ignoreEos) and
   * stopTokenIds are held back (never sampled); 0 = off. Stop strings are not affected.
   */
  minTokens: number;
  /** Number of top alternatives returned per token, 0..20. */
  logprobs: number;
  /** Generate without speculative decoding on a worker that runs it (the request's opt-out). */
  disableSpeculation?: boolean;
  /** Token id -> bias in [-100, 100], added to its logit before sampling (after penalties). Unset: none. */
  logitBias?: ReadonlyMap<number, number> | undefined;
  /** Top alternatives per prompt token (vLLM's prompt_logprobs); undefined = no prompt logprobs. */
  promptLogprobs?: number | undefined;
  /** Sequences returned, 1..16 (unset = 1); they share one prefill of the prompt. */
  n?: number | undefined;
  /** Sequences generated, n..16 (unset = n); the n of highest cumulative logprob are returned. */
  bestOf?: number | undefined;
  /** Prepend the prompt's text (and, with logprobs, its tokens' logprobs) to each sequence (completions' echo). */
  echo?: boolean | undefined;
  /** Leave special tokens out of the text (vLLM's skip_special_tokens); default false. */
  skipSpecialTokens?: boolean | undefined;
  /**
   * Output constrained by a grammar (structured outputs, tool calls): tokens that would leave the
   * grammar are masked out where sampling happens. Unset = unconstrained.
   */
  structured?: StructuredOutput;
  /**
   * With `structured`, in a continuation (a disaggregated decode, a request moved to another worker):
   * how many trailing prompt tokens were generated under the constraint already; the worker's matcher
   * accepts them before the first new token. Unset = 0.
   */
  structuredMatchedTokens?: number;
}

/**
 * What a constrained request's output must match: OpenAI's response_format (json_object, json_schema
 * with strict) and vLLM's guided_json / guided_regex / guided_choice / guided_grammar.
 */
export type StructuredOutput =
  | { kind: "json_object" }
  | { kind: "json_schema"; schema: unknown; strict: boolean }
  | { kind: "regex"; pattern: string }
  | { kind: "choice"; choices: string[] }
  | { kind: "grammar"; grammar: string };

export interface TokenLogprob {
  tokenId: number;
  logprob: number;
}

/** A prompt token's log probability under the model (undefined for the first: nothing predicts it). */
export interface PromptToken {
  tokenId: number;
  logprob: number | undefined;
  top: TokenLogprob[];
}

export interface GeneratedToken {
  tokenId: number;
  /** Log probability of the chosen token (log-softmax of the raw logits). */
  logprob: number;
  /** The `logprobs` most likely alternatives, most likely first (empty when logprobs = 0). */
  top: TokenLogprob[];
}

export interface Usage {
  promptTokens: number;
  completionTokens: number;
}

/** `index`: which of the request's sequences (SamplingParams.n) the event belongs to; unset = 0. */
export type GenerateEvent =
  | {
      type: "tokens";
      tokens: GeneratedToken[];
      textDelta: string;
      index?: number;
      /** With prompt logprobs: on the first event of sequence 0, one entry per prompt token. */
      promptTokens?: PromptToken[];
    }
  | {
      type: "finish";
      index?: number;
      reason: FinishReason;
      usage: Usage;
      textDelta: string;
      /** A handoff (await writes) some of whose KV blocks could not be stored in the remote tier. */
      kvWritesFailed?: boolean;
    };

export interface GenerateRequest {
  requestId: string;
  promptIds: number[];
  sampling: SamplingParams;
  /** Lower values are served first (default 0); equal priorities are served in arrival order. */
  priority?: number;
  /** Wall-clock deadline (ms since the epoch): past it the request ends with DEADLINE_EXCEEDED. */
  deadline?: number;
  /** KV transfer (disaggregated serving, migration); needs an engine with a remote KV tier. */
  kv?: {
    /** Leading full blocks of the prompt that must come from the remote tier (prefilled elsewhere). */
    expectedRemoteBlocks?: number;
    /** Hold the finish event until the blocks this request filled are stored (a prefill worker's handoff). */
    awaitWrites?: boolean;
  };
  /** Receives the request's timed phases (queue, prefill, decode, KV transfer) when it is traced. */
  trace?: RequestPhases;
}

export interface ModelDescription {
  id: string;
  architecture: string;
  maxContext: number;
  vocabSize: number;
  dtype: "float32" | "float16" | "bfloat16";
}
