import assert from "node:assert/strict";
import path from "node:path";
import { modelTensors, parameterCount } from "./model-tensors.ts";
import { ARCHS, modelSpec } from "./presets.ts";
import { readSafetensorsHeader } from "./safetensors-header.ts";
import { fileOrder } from "./safetensors-writer.ts";

const reference = path.resolve(import.meta.dirname, "../../services/worker/testdata/hf-reference");

describe("model-tensors", () => {
  for (const arch of ARCHS) {
    it(`names and shapes tiny-${arch} as the reference checkpoint`, async () => {
      const header = await readSafetensorsHeader(path.join(reference, `tiny-${arch}`, "model.safetensors"));
      const ours = fileOrder(
        modelTensors(modelSpec(arch, "tiny")).map((t) => ({ ...t, dtype: "F32" as const })),
      );
      assert.deepEqual(
        ours.map((t) => [t.name, [...t.shape]]),
        header.tensors.map(([n, e]) => [n, e.shape]),
      );
    });
  }

  it("puts tensors in state-dict order: embeddings, layers, final norm, lm_head", () => {
    const names = modelTensors(modelSpec("llama", "tiny")).map((t) => t.name);
    assert.equal(names[0], "model.embed_tokens.weight");
    assert.equal(names[1], "model.layers.0.self_attn.q_proj.weight");
    assert.deepEqual(names.slice(-2), ["model.norm.weight", "lm_head.weight"]);
  });

  it("counts parameters", () => {
    assert.equal(parameterCount(modelSpec("llama", "tiny")), 1181568 / 4);
    assert.equal(parameterCount(modelSpec("qwen2", "tiny")), 986240 / 4);
    assert.equal(parameterCount(modelSpec("mixtral", "tiny")), 2954112 / 4);
    const base = parameterCount(modelSpec("llama", "base"));
    assert.ok(base > 80e6 && base < 120e6, String(base));
  });
});
