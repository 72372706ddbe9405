// One request inside the engine: its tokens, its progress through the KV cache, its sampler and
// output state, and the queue its events go out on.

import { StopStringMatcher } from "../../inference/stop-strings.ts";
import type { FinishReason, GenerateEvent, PromptToken, SamplingParams } from "../../inference/types.ts";
import type { TesseraError } from "../../kernel/errors.ts";
import type { RequestPhases } from "../../kernel/telemetry/phase-spans.ts";
import type { TextStream } from "../../tokenizer/text-stream.ts";
import { emptyRequestKv, type RequestKv } from "../kv/kv-cache-manager.ts";
import { TokenHistory } from "../sampling/penalties.ts";
import { Sampler } from "../sampling/sampler.ts";
import { type Draft, NO_DRAFT } from "../speculative/draft.ts";
import type { Constraint } from "../structured/constraint.ts";
import { EventQueue } from "./event-queue.ts";

/** The lifecycle, in order: a request only moves forward, except RUNNING <-> PREEMPTED. */
export const RequestStatus = { WAITING: 0, RUNNING: 1, PREEMPTED: 2, FINISHED: 3 } as const;
export type RequestStatus = (typeof RequestStatus)[keyof typeof RequestStatus];

export interface RequestTimings {
  arrival: number;
  /** Queued for scheduling (after the remote KV fetch, when there is one). */
  submitted: number | undefined;
  firstScheduled: number | undefined;
  firstToken: number | undefined;
  lastToken: number | undefined;
  /** The first store of one of its blocks to the remote KV tier began. */
  firstKvWrite: number | undefined;
}

export class EngineRequest {
  readonly id: string;
  /** Which of its request's sequences (SamplingParams.n, best_of) this is; 0 for a single one. */
  readonly index: number;
  /**
   * The request's other sequences, waiting for this one's prefill: once its prompt is computed they
   * fork from it (engine-core.ts), sharing its prompt blocks, so the prompt is computed once.
   */
  forks: EngineRequest[] = [];
  /** It forked from another sequence of its request, which computed its prompt. */
  forked = false;
  /**
   * With prompt logprobs: each prompt token's entry, by position, filled as the prompt is computed
   * (such a request takes nothing from the prefix cache, so every position is computed here).
   */
  readonly promptTokens: PromptToken[] | undefined;
  /** The prompt entries went out (with the first token). */
  promptTokensSent = false;
  /** Arrival order, for FCFS among equal priorities. */
  readonly order: number;
  /** Lower values are served first (as in vLLM); default 0. */
  readonly priority: number;
  readonly promptLength: number;
  /** Prompt followed by the generated tokens: everything the cache must hold. */
  readonly tokens: number[];
  readonly sampling: SamplingParams;
  readonly sampler: Sampler;
  /** Prompt ids and output counts, for penalties (only when the request sets one). */
  readonly history: TokenHistory | undefined;
  readonly stops: StopStringMatcher;
  readonly text: TextStream;
  readonly events: EventQueue<GenerateEvent>;
  readonly deadline: number | undefined;
  readonly timings: RequestTimings;
  /** Where its phases go when it is traced. */
  readonly trace: RequestPhases | undefined;
  status: RequestStatus = RequestStatus.WAITING;
  /** Tokens whose K/V are in the cache. */
  numComputedTokens = 0;
  /** Prompt tokens served from the prefix cache at first scheduling. */
  numCachedPromptTokens = 0;
  /** Prompt tokens whose KV blocks came from the remote tier (imported before scheduling). */
  numRemotePromptTokens = 0;
  numPreemptions = 0;
  kv: RequestKv = emptyRequestKv();
  /** Speculative proposals after its last token, verified by its next step (speculative/). */
  draft: Draft = NO_DRAFT;
  cancelRequested = false;
  /** Blocks imported from the remote tier for this request, held until it is first scheduled. */
  pinnedBlocks: number[] = [];
  /** Stores of this request's blocks still in flight. */
  /** Each resolves true once stored, false when the store failed (it never rejects). */
  kvWrites: Promise<boolean>[] = [];
  /** Whether the finish event waits for kvWrites. */
  awaitKvWrites = false;
  finishReason: FinishReason | undefined;
  error: TesseraError | undefined;
  /** Structured output: the grammar its tokens must follow (set before it is submitted). */
  constraint: Constraint | undefined;

  constructor(init: {
    id: string;
    order: number;
    priority: number;
    promptIds: readonly number[];
    sampling: SamplingParams;
    /** The model's eos ids, held back with the stop ids until min_tokens tokens were generated. */
    eosTokenIds: readonly number[];
    text: TextStream;
    deadline: number | undefined;
    now: number;
    onCancel: () => void;
    trace?: RequestPhases | undefined;
    index?: number;
  }) {
    this.id = init.id;
    this.index = init.index ?? 0;
    // Sequence 0 carries the prompt's entries for the whole request.
    this.promptTokens = init.sampling.promptLogprobs === undefined || this.index > 0 ? undefined : [];
    this.order = init.order;
    this.priority = init.priority;
    this.promptLength = init.promptIds.length;
    this.tokens = [...init.promptIds];
    this.sampling = init.sampling;
    this.sampler = new Sampler(init.sampling, {
      eosTokenIds: init.eosTokenIds,
      promptLength: init.promptIds.length,
    });
    this.history = this.sampler.usesHistory ? new TokenHistory(init.promptIds) : undefined;
    this.stops = new StopStringMatcher(init.sampling.stop);
    this.text = init.text;
    this.deadline = init.deadline;
    this.timings = {
      arrival: init.now,
      submitted: undefined,
      firstScheduled: undefined,
      firstToken: undefined,
      lastToken: undefined,
      firstKvWrite: undefined,
    };
    this.trace = init.trace;
    this.events = new EventQueue(init.onCancel);
  }

  /** Whether its prompt positions' logits are wanted (prompt logprobs, on sequence 0). */
  get wantsPromptLogits(): boolean {
    return this.promptTokens !== undefined;
  }

  get numTokens(): number {
    return this.tokens.length;
  }

  get numOutputTokens(): number {
    return this.tokens.length - this.promptLength;
  }

  get isFinished(): boolean {
    return this.status === RequestStatus.FINISHED;
  }

  /** Tokens not yet in the cache. */
  get numPendingTokens(): number {
    return this.tokens.length - this.numComputedTokens;
  }
}

/** Serving order: priority first (lower first), then arrival. */
export function servesBefore(a: EngineRequest, b: EngineRequest): number {
  return a.priority - b.priority || a.order - b.order;
}
