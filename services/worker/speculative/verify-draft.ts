// Verification of a request's proposals from the logits of one target step (rows for its last token
// and each proposal), emitting the accepted prefix and one token more, so the output follows the target
// distribution exactly:
//   - a proposal drawn from a distribution q (a draft model sampling) is accepted with probability
//     min(1, p(x) / q(x)); on rejection the token is drawn from norm(max(0, p - q)) (Leviathan et al.,
//     "Fast Inference from Transformers via Speculative Decoding", 2023; Chen et al., 2023);
//   - a point-mass proposal (n-gram lookup, a draft model's argmax for greedy requests) is checked by
//     drawing the target token as the request would without speculation (the sampler's own draw of the
//     position) and accepting when it equals the proposal: with q a point mass this accepts with
//     probability p(x) and otherwise draws from p without x, which is the rule above, and the tokens are
//     those non-speculative decoding gives for the same seed, greedy or sampled;
//   - after the last accepted proposal, or when all are accepted, the next token is sampled as usual.
// Every draw stays a function of (seed, position): the acceptance test and the residual draw use their
// own Philox draw indices of the position (ACCEPT_DRAW, RESAMPLE_DRAW), the draft model its DRAFT_DRAW,
// so a seeded request repeats itself exactly.
import type { FinishReason, GeneratedToken } from "../../inference/types.ts";
import { appendToken, type OutputLimits } from "../engine/output-processor.ts";
import type { EngineRequest } from "../engine/request.ts";
import { CounterRng } from "../sampling/philox.ts";
import { scoreToken, type TokenDistribution } from "../sampling/sampler.ts";

/** Philox draw indices of a position beside the sampler's draw 0. */
export const ACCEPT_DRAW = 1;
export const RESAMPLE_DRAW = 2;
export const DRAFT_DRAW = 3;

export interface Verified {
  /** Proposals accepted (their KV, computed by the step, is kept). */
  accepted: number;
  /** Set when the request finished on one of the emitted tokens. */
  reason: FinishReason | undefined;
}

/**
 * Appends the accepted proposals and the token after them to `request` (stop checks included), from
 * `rows`: numDraft + 1 logits rows of `vocab` each, row j predicting the token after proposal j - 1.
 * `onToken` runs before each token is appended (metrics, timings).
 */
export function verifyDraft(
  request: EngineRequest,
  rows: Float32Array,
  vocab: number,
  numDraft: number,
  limits: OutputLimits,
  onToken: () => void,
): Verified {
  const { draft, sampler } = request;
  const rng = draft.q?.some((q) => q !== undefined) ? new CounterRng(sampler.seed) : undefined;
  let accepted = 0;
  for (let j = 0; j <= numDraft; j++) {
    const logits = rows.subarray(j * vocab, (j + 1) * vocab);
    const position = request.numTokens;
    let token: GeneratedToken;
    let ok = false;
    const q = j < numDraft ? draft.q?.[j] : undefined;
    if (j < numDraft && q !== undefined && rng !== undefined) {
      ({ token, ok } = rejectionSample(request, rng, logits, position, draft.tokens[j]!, q));
    } else {
      token = sampler.sample(logits, position, request.history);
      ok = j < numDraft && token.tokenId === draft.tokens[j];
    }
    onToken();
    const reason = appendToken(request, token, limits);
    if (ok) accepted++;
    if (reason) return { accepted, reason };
    if (!ok) break;
  }
  return { accepted, reason: undefined };
}

/** Accepts proposal x with probability min(1, p(x) / q(x)), else draws from norm(max(0, p - q)). */
function rejectionSample(
  request: EngineRequest,
  rng: CounterRng,
  logits: Float32Array,
  position: number,
  x: number,
  q: TokenDistribution,
): { token: GeneratedToken; ok: boolean } {
  const logprobs = request.sampling.logprobs;
  const p = request.sampler.distribution(logits, position, request.history);
  const qOf = new Map<number, number>();
  for (let i = 0; i < q.ids.length; i++) qOf.set(q.ids[i]!, q.probs[i]!);
  const px = probabilityOf(p, x);
  const qx = qOf.get(x) ?? 0;
  if (qx > 0 && rng.uniform(position, ACCEPT_DRAW) * qx < px)
    return { token: scoreToken(logits, x, logprobs), ok: true };
  const residual = new Float64Array(p.ids.length);
  let total = 0;
  for (let i = 0; i < p.ids.length; i++) {
    residual[i] = Math.max(0, p.probs[i]! - (qOf.get(p.ids[i]!) ?? 0));
    total += residual[i]!;
  }
  // p equal to q leaves nothing (and then every proposal is accepted): draw from p itself.
  const weights = total > 0 ? residual : p.probs;
  const u = rng.uniform(position, RESAMPLE_DRAW) * (total > 0 ? total : 1);
  let acc = 0;
  let id = -1;
  for (let i = 0; i < p.ids.length; i++) {
    if (!(weights[i]! > 0)) continue;
    acc += weights[i]!;
    id = p.ids[i]!;
    if (u < acc) break;
  }
  return { token: scoreToken(logits, id, logprobs), ok: id === x };
}

function probabilityOf(d: TokenDistribution, id: number): number {
  for (let i = 0; i < d.ids.length; i++) if (d.ids[i] === id) return d.probs[i]!;
  return 0;
}
