// Messages between the draft model's handle (draft-thread-handle.ts, on the engine's event loop) and its
// thread (draft-thread.ts). One "propose" carries a whole round: every row's unseen tokens and block
// table, and how many proposals it wants; the thread runs the round's k draft steps back to back and
// answers once, so a round costs one thread round trip, not k.
import type { SamplingParams } from "../../inference/types.ts";
import type { AttentionBackendName } from "../graph/attention-backend.ts";
import type { ModelRunnerOptions } from "../runtime/model-runner.ts";
import type { TokenDistribution } from "../sampling/sampler.ts";

export type DraftThreadOptions = Pick<
  ModelRunnerOptions,
  "modelDir" | "threads" | "numBlocks" | "blockSize" | "attention"
>;

/**
 * How a request's proposals are picked (draft-picker.ts): the draft's argmax (a greedy request), its
 * argmax after logit_bias (a greedy one with a bias), or a draw under the request's knobs, keyed by the
 * request's seed (params.seed) and the position. Penalties and min_tokens are off in `params`.
 */
export type DraftPicking =
  | { kind: "argmax" }
  | { kind: "biased"; params: SamplingParams }
  | { kind: "sampled"; params: SamplingParams };

export interface DraftRow {
  /** The request's key in the thread (its picking is sent once, with the row that opens it). */
  key: number;
  /** Set on the request's first round: how its proposals are picked. */
  open?: DraftPicking;
  /** Tokens whose K/V the draft's pool holds for it (positions 0..numPast-1). */
  numPast: number;
  /** Tokens the draft has not seen yet (the last one is the request's last token). */
  feed: number[];
  blockTable: number[];
  /** Proposals wanted; the first is at position numPast + feed.length. */
  k: number;
}

export type ToDraft =
  | { type: "propose"; id: number; rows: DraftRow[]; released: number[] }
  | { type: "close" };

export type FromDraft =
  | { type: "ready"; attention: AttentionBackendName; loadMs: number }
  /** Per row, its proposals; per sampled row, the distribution each was drawn from. */
  | {
      type: "proposed";
      id: number;
      tokens: number[][];
      q: (TokenDistribution[] | undefined)[];
      runMs: number;
    }
  | { type: "error"; id: number | undefined; code: number; message: string };
