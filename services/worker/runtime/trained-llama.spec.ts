// A Llama trained on English prose (devtools/reference/train_small_llama.py), not random weights: our
// tokenizer encodes its held-out text to transformers' ids, our runtime gives the held-out windows
// transformers' perplexity within 0.1%, and the engine's greedy continuation of an English prompt is
// transformers' (devtools/reference/expected/trained-llama.json).
import assert from "node:assert/strict";
import fs from "node:fs";
import { greedySampling } from "../../inference/sampling-params.ts";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import { Engine } from "../engine/engine.ts";
import {
  TRAINED_LLAMA_DIR,
  TRAINED_LLAMA_HELDOUT,
  teacherForcedPerplexity,
  trainedLlamaReference,
} from "../testdata/trained-llama.ts";
import { ModelRunner } from "./model-runner.ts";

const reference = trainedLlamaReference();

describe("trained Llama against transformers", () => {
  it("our tokenizer encodes the held-out text and the prompt to transformers' ids", () => {
    const tokenizer = Tokenizer.fromModelDir(TRAINED_LLAMA_DIR);
    const ids = tokenizer.encode(fs.readFileSync(TRAINED_LLAMA_HELDOUT, "utf8"));
    assert.deepEqual(ids.slice(0, reference.heldout_ids.flat().length), reference.heldout_ids.flat());
    assert.deepEqual(tokenizer.encode(reference.prompt), reference.prompt_ids);
  });

  it("gives the held-out windows transformers' perplexity within 0.1%", async () => {
    const numBlocks = Math.ceil(reference.context / 16);
    const runner = await ModelRunner.start({
      modelDir: TRAINED_LLAMA_DIR,
      architectureOverride: undefined,
      threads: 1,
      numBlocks,
      blockSize: 16,
      attention: "onnx-ops",
    });
    try {
      const { perplexity } = await teacherForcedPerplexity(runner, reference.heldout_ids);
      const relative = Math.abs(perplexity - reference.heldout_perplexity) / reference.heldout_perplexity;
      assert.ok(
        relative <= 1e-3,
        `perplexity ${perplexity}, transformers ${reference.heldout_perplexity} (relative ${relative})`,
      );
    } finally {
      await runner.close();
    }
  });

  it("generates transformers' greedy continuation of an English prompt through the engine", async () => {
    const engine = await Engine.load(TRAINED_LLAMA_DIR, { threads: 1 });
    try {
      const sampling = greedySampling({ maxTokens: reference.output_ids.length, ignoreEos: true });
      const ids: number[] = [];
      for await (const e of engine.generate({
        requestId: "trained",
        promptIds: reference.prompt_ids,
        sampling,
      }))
        if (e.type === "tokens") ids.push(...e.tokens.map((t) => t.tokenId));
      assert.deepEqual(ids, reference.output_ids);
      assert.equal(Tokenizer.fromModelDir(TRAINED_LLAMA_DIR).decode(ids), reference.output_text);
    } finally {
      await engine.close();
    }
  });
});
