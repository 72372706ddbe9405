import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { configFileTexts } from "./hf-config.ts";
import { ARCHS, modelSpec } from "./presets.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

describe("hf-config", () => {
  for (const arch of ARCHS) {
    it(`writes the reference tiny-${arch} config.json and generation_config.json byte for byte`, () => {
      const texts = configFileTexts(modelSpec(arch, "tiny"), "float32");
      for (const name of ["config.json", "generation_config.json"] as const) {
        assert.equal(texts[name], readFileSync(path.join(reference, `tiny-${arch}`, name), "utf8"), name);
      }
    });
  }

  it("records the dtype and the preset's shape", () => {
    const config = JSON.parse(
      configFileTexts(modelSpec("llama", "base"), "bfloat16")["config.json"],
    ) as Record<string, unknown>;
    assert.equal(config["dtype"], "bfloat16");
    assert.equal(config["hidden_size"], 768);
    assert.equal(config["num_hidden_layers"], 12);
    assert.equal(config["head_dim"], 64);
    assert.equal(config["vocab_size"], 8192);
    assert.equal(config["max_position_embeddings"], 2048);
  });

  it("lists one layer type per Qwen2 layer", () => {
    const config = JSON.parse(
      configFileTexts(modelSpec("qwen2", "small"), "float16")["config.json"],
    ) as Record<string, unknown>;
    assert.deepEqual(config["layer_types"], Array(4).fill("full_attention"));
    assert.equal(config["tie_word_embeddings"], true);
  });
});
