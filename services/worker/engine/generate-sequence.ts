// The generation loop of one request: prefill the prompt, then sample, stream and stop.
// One step = run the model -> sample -> detokenize -> stop checks -> emit.
import { Code, TesseraError } from "../../common/errors.ts";
import type { ModelRunner } from "../runtime/model-runner.ts";
import { Sampler } from "../sampling/sampler.ts";
import { StopStringMatcher } from "../sampling/stop-strings.ts";
import type { TextStream, Tokenizer } from "../tokenizer/tokenizer.ts";
import type {
  FinishReason,
  GeneratedToken,
  GenerateEvent,
  GenerateRequest,
  ModelDescription,
} from "./types.ts";

export interface SequenceContext {
  runner: ModelRunner;
  tokenizer: Tokenizer;
  description: ModelDescription;
  eosTokenIds: readonly number[];
}

/** Checks the prompt against the model; errors name the request field. */
export function validatePrompt(promptIds: number[], model: ModelDescription): void {
  if (promptIds.length === 0) throw TesseraError.invalidArgument("prompt", "must not be empty");
  const bad = promptIds.find((id) => !Number.isInteger(id) || id < 0 || id >= model.vocabSize);
  if (bad !== undefined) {
    throw TesseraError.invalidArgument(
      "prompt",
      `token id ${bad} is outside the vocabulary (0..${model.vocabSize - 1})`,
    );
  }
  if (promptIds.length >= model.maxContext) {
    throw TesseraError.invalidArgument(
      "prompt",
      `${promptIds.length} tokens do not fit the model's context of ${model.maxContext} (at least one must be generated)`,
    );
  }
}

export function generateSequence(
  ctx: SequenceContext,
  request: GenerateRequest,
  signal?: AbortSignal,
): AsyncIterable<GenerateEvent> {
  validatePrompt(request.promptIds, ctx.description);
  const sampler = new Sampler(request.sampling);
  return run(ctx, request, sampler, signal);
}

async function* run(
  ctx: SequenceContext,
  request: GenerateRequest,
  sampler: Sampler,
  signal: AbortSignal | undefined,
): AsyncGenerator<GenerateEvent> {
  const { runner, tokenizer, description } = ctx;
  const params = request.sampling;
  const stopIds = new Set([...(params.ignoreEos ? [] : ctx.eosTokenIds), ...params.stopTokenIds]);
  const text: TextStream = tokenizer.textStream();
  const stops = new StopStringMatcher(params.stop);
  const seq = runner.newSequence();
  const promptTokens = request.promptIds.length;
  let completionTokens = 0;
  const finish = (reason: FinishReason, textDelta: string): GenerateEvent => ({
    type: "finish",
    reason,
    usage: { promptTokens, completionTokens },
    textDelta,
  });
  try {
    let logits = await runner.step(seq, request.promptIds, 0);
    let position = promptTokens;
    for (;;) {
      if (signal?.aborted) {
        yield finish("cancelled", "");
        return;
      }
      const token: GeneratedToken = sampler.sample(logits);
      completionTokens++;
      if (stopIds.has(token.tokenId)) {
        yield { type: "tokens", tokens: [token], textDelta: "" };
        yield finish("stop", stops.flush(text.flush()));
        return;
      }
      const matched = stops.push(text.push(token.tokenId));
      if (matched.stopped) {
        yield { type: "tokens", tokens: [token], textDelta: matched.text };
        yield finish("stop_string", "");
        return;
      }
      yield { type: "tokens", tokens: [token], textDelta: matched.text };
      if (completionTokens >= params.maxTokens) {
        yield finish("length", stops.flush(text.flush()));
        return;
      }
      // The token just sampled sits at `position`; the next one would fall outside the context.
      if (position + 1 >= description.maxContext) {
        yield finish("context", stops.flush(text.flush()));
        return;
      }
      logits = await runner.step(seq, [token.tokenId], position++);
    }
  } catch (err) {
    throw err instanceof TesseraError
      ? err
      : new TesseraError(Code.INTERNAL, "generation failed", { cause: err });
  } finally {
    runner.free(seq);
  }
}
