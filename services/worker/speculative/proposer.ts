// What every proposer does: for each request of the batch that may speculate, set request.draft to up
// to k tokens it guesses follow the request's last token. A proposer with state per request (a draft
// model's KV) frees it on release.
import type { EngineRequest } from "../engine/request.ts";
import type { SpeculativeMethod } from "./speculative-config.ts";

export interface ProposalRequest {
  request: EngineRequest;
  /** Most proposals worth making (num_speculative_tokens, less near max_tokens or the context's end). */
  k: number;
}

export interface Proposer {
  readonly method: SpeculativeMethod;
  propose(batch: readonly ProposalRequest[]): void | Promise<void>;
  /** The request finished: drop what the proposer keeps for it. */
  release(request: EngineRequest): void;
  close(): Promise<void>;
}
