// vLLM's prompt_logprobs (and OpenAI's echo with logprobs): the log probability the model gives each
// prompt token, read from the logits row of the position before it, with the top alternatives. Like
// every reported logprob here, the log-softmax of the raw logits (no penalty, bias or temperature).
import type { PromptToken } from "../../inference/types.ts";
import { logitStats } from "./sampler.ts";
import { topKIndices } from "./top-k.ts";

/** The entry of `tokenId` predicted by `row` (one vocabulary-wide logits row), with `top` alternatives. */
export function promptTokenLogprob(row: Float32Array, tokenId: number, top: number): PromptToken {
  const { logSumExp } = logitStats(row);
  const alternatives = top > 0 ? [...topKIndices(row, top)] : [];
  return {
    tokenId,
    logprob: row[tokenId]! - logSumExp,
    top: alternatives.map((id) => ({ tokenId: id, logprob: row[id]! - logSumExp })),
  };
}
