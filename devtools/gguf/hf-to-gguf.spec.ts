import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { getLlama, type Llama, LlamaLogLevel, readGgufFileInfo, type Token } from "node-llama-cpp";
import { greedySampling } from "../../services/inference/sampling-params.ts";
import { Engine } from "../../services/worker/engine/engine.ts";
import { createCheckpoint } from "../model-factory/create-checkpoint.ts";
import { GGML_TYPE } from "./gguf-writer.ts";
import { convertHfToGguf, permuteRotary } from "./hf-to-gguf.ts";

/** llama.cpp's greedy ids for `prompt` from the GGUF `file`. */
async function llamaCppIds(llama: Llama, file: string, prompt: number[], n: number): Promise<number[]> {
  const model = await llama.loadModel({ modelPath: file });
  try {
    const context = await model.createContext({ contextSize: 256, threads: 1 });
    const ids: number[] = [];
    for await (const t of context
      .getSequence()
      .evaluate(prompt as Token[], { temperature: 0, yieldEogToken: true })) {
      ids.push(t);
      if (ids.length === n) break;
    }
    await context.dispose();
    return ids;
  } finally {
    await model.dispose();
  }
}

describe("hf-to-gguf", () => {
  it("permutes each head's rows from Hugging Face's rotary halves to ggml's interleaved pairs", () => {
    // 2 heads of 4 rows, 1 column: per head the rows [a0 a1 | b0 b1] become [a0 b0 a1 b1].
    const w = Float32Array.of(0, 1, 2, 3, 10, 11, 12, 13);
    assert.deepEqual([...permuteRotary(w, 2, 4, 1)], [0, 2, 1, 3, 10, 12, 11, 13]);
    // Columns move with their rows.
    const w2 = Float32Array.of(0, 0.5, 1, 1.5, 2, 2.5, 3, 3.5);
    assert.deepEqual([...permuteRotary(w2, 1, 4, 2)], [0, 0.5, 2, 2.5, 1, 1.5, 3, 3.5]);
  });

  describe("a tiny llama checkpoint", function () {
    this.timeout(180_000);
    let dir: string;
    let llama: Llama;
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), "hf-to-gguf-"));
      await createCheckpoint({ arch: "llama", preset: "tiny", seed: 3, out: path.join(dir, "model") });
      llama = await getLlama({ gpu: false, build: "never", logLevel: LlamaLogLevel.error });
    });
    after(async () => {
      await llama?.dispose();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("converted at F32 gives llama.cpp the greedy ids Tessera computes (but at near-ties)", async () => {
      const model = path.join(dir, "model");
      const file = path.join(dir, "f32.gguf");
      convertHfToGguf(model, file, "F32");
      const engine = await Engine.load(model, { threads: 1 });
      try {
        for (const prompt of [
          [5, 9, 200, 31, 77, 400, 12, 8, 300, 45, 61, 7],
          Array.from({ length: 40 }, (_, i) => 3 + ((i * 53) % 480)),
        ]) {
          const ours: { id: number; gap: number; second: number }[] = [];
          const sampling = greedySampling({ maxTokens: 24, ignoreEos: true, logprobs: 2 });
          for await (const e of engine.generate({
            requestId: `r${prompt.length}`,
            promptIds: prompt,
            sampling,
          }))
            if (e.type === "tokens")
              for (const t of e.tokens)
                ours.push({
                  id: t.tokenId,
                  gap: t.top[0]!.logprob - t.top[1]!.logprob,
                  second: t.top[1]!.tokenId,
                });
          const theirs = await llamaCppIds(llama, file, prompt, 24);
          const i = ours.findIndex((o, k) => o.id !== theirs[k]);
          // A divergence is allowed only where our top-2 logits tie to 1e-2 and llama.cpp took the second.
          if (i >= 0) assert.ok(ours[i]!.gap < 1e-2 && ours[i]!.second === theirs[i], `ids differ at ${i}`);
          else
            assert.deepEqual(
              theirs,
              ours.map((o) => o.id),
            );
        }
      } finally {
        await engine.close();
      }
    });

    for (const type of ["Q8_0", "Q4_0"] as const) {
      it(`writes ${type} projections (norms and the embedding F32) that llama.cpp loads and runs`, async () => {
        const file = path.join(dir, `${type}.gguf`);
        convertHfToGguf(path.join(dir, "model"), file, type);
        const info = await readGgufFileInfo(file, { readTensorInfo: true });
        const types = new Map(info.fullTensorInfo!.map((t) => [t.name, t.ggmlType]));
        assert.equal(types.get("blk.0.attn_q.weight"), GGML_TYPE[type]);
        assert.equal(types.get("blk.1.ffn_down.weight"), GGML_TYPE[type]);
        assert.equal(types.get("output.weight"), GGML_TYPE[type]);
        assert.equal(types.get("token_embd.weight"), GGML_TYPE.F32);
        assert.equal(types.get("blk.0.attn_norm.weight"), GGML_TYPE.F32);
        const ids = await llamaCppIds(llama, file, [5, 9, 200, 31], 8);
        assert.equal(ids.length, 8);
      });
    }
  });

  it("refuses checkpoints it cannot convert, naming the field", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "hf-to-gguf-bad-"));
    try {
      fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify({ model_type: "qwen2" }));
      assert.throws(
        () => convertHfToGguf(dir, path.join(dir, "x.gguf"), "F32"),
        /model_type qwen2; only llama/,
      );
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
