// One request's output as the client sees it, across the segments that produce it: a whole generation
// on one worker; or a prefill worker's first token, then a decode worker's continuation; and, after a
// worker failed mid-stream, another worker's continuation from the tokens already streamed. Each
// segment asks for the original prompt plus every token streamed so far, and for what remains of
// max_tokens, so nothing is generated twice and nothing is skipped. Worker messages become router
// events with the router's own text: one detokenizer for the whole request, so a stop string that
// straddles the point where a worker took over is still found (the router then ends the request and
// cancels the worker). The finish's usage counts the original prompt and every token streamed.
//
// Every segment carries the same seed: the client's, or for a request that gave none one drawn here
// once. A worker's draw for a token is a function of the seed and the token's position alone, so the
// segments together sample what one worker would have (a seeded request gives the same tokens on every
// path), and an unseeded request split or moved between workers stays one random stream.
import { randomBytes } from "node:crypto";
import type { MessageInitShape } from "@bufbuild/protobuf";
import {
  FinishReason,
  type GenerateResponse,
  type KvTransferSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import type { SamplingParams } from "../../inference/types.ts";
import { Detokenizer } from "./detokenizer.ts";
import type { RouterEvent } from "./router-events.ts";
import type { PreparedRequest } from "./router-request.ts";

/** whole: the entire generation; prefill: the first token, its KV stored; continue: the rest. */
export type SegmentKind = "whole" | "prefill" | "continue";

export interface SegmentRequest {
  promptIds: number[];
  sampling: SamplingParams;
  kv: MessageInitShape<typeof KvTransferSchema> | undefined;
}

/**
 * Whether a request's output is the same when its generated tokens are handed to another worker as
 * part of its prompt. Presence and frequency penalties count generated tokens only, so they would
 * change; everything else (greedy decoding, repetition penalty over prompt and output, stop ids,
 * max_tokens, context) carries over, and so do sampled tokens: a worker's draw for a token depends
 * only on the seed (the same in every segment) and the token's position.
 */
export function resumable(sampling: SamplingParams): boolean {
  // Several sequences share one worker's prompt blocks, and prompt logprobs are computed where the
  // prompt is: such requests stay whole on one worker.
  const single = (sampling.n ?? 1) === 1 && (sampling.bestOf ?? 1) <= 1;
  return (
    single &&
    sampling.promptLogprobs === undefined &&
    sampling.presencePenalty === 0 &&
    sampling.frequencyPenalty === 0
  );
}

export class Continuation {
  /** Every token id streamed to the client, in order. */
  readonly generated: number[] = [];
  readonly #prepared: PreparedRequest;
  /** The request's sampling parameters with a seed, the same for every segment. */
  readonly #sampling: SamplingParams;
  readonly #detokenizer: Detokenizer;
  #done = false;
  /**
   * Leading full blocks of the prompt the remote tier must hold: a prefill worker that streamed its
   * token computed them and stored them (its final message waits for that), or was storing them when
   * it failed; whether a shortfall is recomputed or fails the request is the decode worker's policy.
   */
  #expectedBlocks = 0;

  constructor(prepared: PreparedRequest) {
    this.#prepared = prepared;
    const { model, sampling, info } = prepared;
    const draws = sampling.seed === undefined && sampling.temperature > 0;
    this.#sampling = draws ? { ...sampling, seed: randomBytes(8).readBigUInt64LE(0) } : sampling;
    this.#detokenizer = new Detokenizer(model.tokenizer, sampling, info.eosTokenIds, {
      skipSpecialTokens: prepared.request.skipSpecialTokens,
    });
  }

  /** The generation has ended (a finish event was produced). */
  get done(): boolean {
    return this.#done;
  }

  /**
   * The prefill worker could not store the prompt's blocks: the continuation runs on that worker, which
   * holds them in its own cache, and expects none from the remote tier.
   */
  keepLocal(): void {
    this.#expectedBlocks = 0;
  }

  /** What a segment of `kind` asks its worker for. */
  segment(kind: SegmentKind): SegmentRequest {
    const { promptIds } = this.#prepared;
    const sampling = this.#sampling;
    switch (kind) {
      case "whole":
        return { promptIds, sampling, kv: undefined };
      case "prefill":
        return {
          promptIds,
          sampling: { ...sampling, maxTokens: 1, minTokens: Math.min(sampling.minTokens, 1) },
          kv: { expectedRemoteBlocks: 0, awaitWrites: sampling.maxTokens > 1 },
        };
      case "continue":
        // Blocks beyond the prompt's (those a failed decode worker stored as it went) are read too
        // when the tier has them, but are not required: the last of them may not have landed.
        return {
          promptIds: [...promptIds, ...this.generated],
          // max_tokens and min_tokens count the tokens of the whole request: those already streamed are
          // part of this segment's prompt.
          sampling: {
            ...sampling,
            maxTokens: sampling.maxTokens - this.generated.length,
            minTokens: Math.max(0, sampling.minTokens - this.generated.length),
            // The worker's matcher replays the tokens streamed so far before it constrains new ones.
            ...(sampling.structured && { structuredMatchedTokens: this.generated.length }),
          },
          kv: { expectedRemoteBlocks: this.#expectedBlocks, awaitWrites: false },
        };
      default:
        return assertNever(kind);
    }
  }

  /** The router events of one message from a `kind` segment's worker. */
  accept(message: GenerateResponse, kind: SegmentKind): RouterEvent[] {
    const events: RouterEvent[] = [];
    this.emit(message, kind, (event) => events.push(event));
    return events;
  }

  /**
   * accept() without its array: hands the events to `onEvent` as they are made. This runs once per
   * relayed message of every request, so it allocates only what the client is sent: the message's
   * own token list (copied only when a stop string cuts it) and one event per token batch.
   */
  emit(message: GenerateResponse, kind: SegmentKind, onEvent: (event: RouterEvent) => void): void {
    if (this.#done) return;
    if (kind === "prefill" && message.tokens.length > 0)
      this.#expectedBlocks = Math.floor(this.#prepared.promptIds.length / this.#prepared.info.blockSize);
    const { tokens } = message;
    let text = "";
    let taken = 0;
    while (taken < tokens.length) {
      const { tokenId } = tokens[taken++]!;
      this.generated.push(tokenId);
      text += this.#detokenizer.push(tokenId);
      if (this.#detokenizer.stopped) break;
    }
    if (taken > 0)
      onEvent({ type: "tokens", tokens: taken === tokens.length ? tokens : tokens.slice(0, taken), text });
    if (this.#detokenizer.stopped) {
      onEvent(this.#finish(FinishReason.STOP_STRING, ""));
      return;
    }
    const reason = message.finishReason;
    if (reason === FinishReason.UNSPECIFIED) return;
    // The prefill's one token; its final message came once the prompt's blocks were stored.
    if (kind === "prefill" && reason === FinishReason.LENGTH && this.#remaining > 0) return;
    onEvent(this.#finish(reason, this.#detokenizer.finish(reason)));
  }

  get #remaining(): number {
    return this.#prepared.sampling.maxTokens - this.generated.length;
  }

  #finish(reason: FinishReason, text: string): RouterEvent {
    this.#done = true;
    const usage = {
      promptTokens: this.#prepared.promptIds.length,
      completionTokens: this.generated.length,
    };
    return { type: "finish", reason, usage, text };
  }
}

function assertNever(value: never): never {
  throw new Error(`unexpected segment ${JSON.stringify(value)}`);
}
