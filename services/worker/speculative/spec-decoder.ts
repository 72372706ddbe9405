// Speculative decoding in the engine loop: before each schedule, the running requests that are decoding
// get proposals (request.draft) from the configured proposer; the scheduler gives each such request a
// row of 1 + k tokens (its last token and the proposals), the model returns logits at all of them, and
// verify-draft.ts keeps the accepted prefix and one more token. Requests that opt out
// (disable_speculation), constrained ones (structured outputs, forced tool calls: their mask follows
// each token), those with several sequences (n, best_of > 1: they fork from one prefill and share its
// blocks), those asking prompt logprobs (their rows already carry every prompt token's logits; the two
// row kinds never meet, step-inputs.ts), and every request while more than disable_by_batch_size are
// running, decode one token per step.
import type { EngineRequest } from "../engine/request.ts";
import { RequestStatus } from "../engine/request.ts";
import { NO_DRAFT } from "./draft.ts";
import type { ProposalRequest, Proposer } from "./proposer.ts";
import { SpecStats } from "./spec-stats.ts";
import type { SpeculativeConfig } from "./speculative-config.ts";

export class SpecDecoder {
  readonly config: SpeculativeConfig;
  readonly proposer: Proposer;
  readonly stats = new SpecStats();
  private readonly maxContext: number;

  constructor(config: SpeculativeConfig, proposer: Proposer, maxContext: number) {
    this.config = config;
    this.proposer = proposer;
    this.maxContext = maxContext;
  }

  /** Sets the proposals of the running requests for the next step (none for those that may not speculate). */
  async propose(running: readonly EngineRequest[]): Promise<void> {
    for (const r of running) r.draft = NO_DRAFT;
    const limit = this.config.disableByBatchSize;
    if (limit !== undefined && running.length > limit) return;
    const batch: ProposalRequest[] = [];
    for (const request of running) {
      const k = this.proposals(request);
      if (k > 0) batch.push({ request, k });
    }
    if (batch.length > 0) await this.proposer.propose(batch);
  }

  /** How many proposals a request may take now: 0 unless it is decoding and may speculate. */
  private proposals(r: EngineRequest): number {
    if (r.status !== RequestStatus.RUNNING || r.cancelRequested || r.numPendingTokens !== 1) return 0;
    if (!maySpeculate(r)) return 0;
    // The step emits up to k + 1 tokens: no proposal past max_tokens or the context's last position.
    const left = Math.min(r.sampling.maxTokens - r.numOutputTokens, this.maxContext - r.numTokens);
    return Math.max(0, Math.min(this.config.numSpeculativeTokens, left - 1));
  }

  verified(numDraft: number, accepted: number): void {
    this.stats.record(numDraft, accepted);
  }

  release(request: EngineRequest): void {
    request.draft = NO_DRAFT;
    this.proposer.release(request);
  }

  close(): Promise<void> {
    return this.proposer.close();
  }
}

/** Whether a request's tokens may be speculated at all (see the file's head for why each is not). */
export function maySpeculate(r: EngineRequest): boolean {
  const { sampling } = r;
  if (sampling.disableSpeculation) return false;
  if (sampling.structured !== undefined || r.constraint !== undefined) return false;
  if ((sampling.n ?? 1) > 1 || (sampling.bestOf ?? 1) > 1 || r.forks.length > 0) return false;
  return sampling.promptLogprobs === undefined && !r.wantsPromptLogits;
}
