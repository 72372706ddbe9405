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
  /**
   * Output constrained by a grammar (structured outputs, tool calls): tokens that would leave the
   * grammar are masked out where sampling happens. Unset = unconstrained.
   */
  structured?: StructuredOutput;
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

export type GenerateEvent =
  | { type: "tokens"; tokens: GeneratedToken[]; textDelta: string }
  | {
      type: "finish";
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
