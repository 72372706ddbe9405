// A ServedModel for tests of the gRPC servers: token id i decodes to the letter i mod 26, generation
// continues from the last prompt id, and the test paces every token.
import assert from "node:assert/strict";
import type { ServedModel } from "../../inference/served-model.ts";
import type { GenerateEvent, GenerateRequest, ModelDescription } from "../../inference/types.ts";

/** Token id i decodes to the letter i mod 26; generation continues from the last prompt id. */
export class FakeModel implements ServedModel {
  readonly description: ModelDescription = {
    id: "fake",
    architecture: "FakeForCausalLM",
    maxContext: 32,
    vocabSize: 64,
    dtype: "float32",
  };
  readonly tokenizer = {
    vocabSize: 64,
    encode: (text: string, { addSpecialTokens }: { addSpecialTokens: boolean }) => [
      ...(addSpecialTokens ? [1] : []),
      ...[...text].map((c) => (c.charCodeAt(0) - 97 + 26) % 26),
    ],
    decode: (ids: number[]) => ids.map((id) => String.fromCharCode(97 + (id % 26))).join(""),
  };
  readonly signals: AbortSignal[] = [];
  /** Awaited before each token; tests replace it to hold a generation. */
  pace: () => Promise<void> = () => Promise.resolve();

  async *generate(request: GenerateRequest, signal?: AbortSignal): AsyncIterable<GenerateEvent> {
    if (signal) this.signals.push(signal);
    let last = request.promptIds.at(-1) ?? 0;
    let completionTokens = 0;
    const usage = () => ({ promptTokens: request.promptIds.length, completionTokens });
    for (; completionTokens < request.sampling.maxTokens; completionTokens++) {
      await Promise.race([this.pace(), aborted(signal)]);
      if (signal?.aborted)
        return yield { type: "finish", reason: "cancelled", usage: usage(), textDelta: "" };
      last = (last + 1) % 64;
      yield {
        type: "tokens",
        tokens: [{ tokenId: last, logprob: -1, top: [] }],
        textDelta: this.tokenizer.decode([last]),
      };
    }
    yield { type: "finish", reason: "length", usage: usage(), textDelta: "" };
  }
}

export function aborted(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => signal?.addEventListener("abort", () => resolve(), { once: true }));
}

/** Waits until `condition` holds, failing the test after `timeoutMs`. */
export async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) assert.fail("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}
