import assert from "node:assert/strict";
import { Code, TesseraError } from "../../services/kernel/errors.ts";
import { ARCHS, modelSpec, PRESETS, parseArch, parsePreset } from "./presets.ts";

describe("presets", () => {
  it("defines tiny as the reference checkpoints", () => {
    const s = modelSpec("llama", "tiny");
    assert.deepEqual(
      [s.hiddenSize, s.numLayers, s.numHeads, s.numKvHeads, s.headDim, s.intermediateSize, s.vocabSize],
      [96, 2, 6, 2, 16, 256, 512],
    );
    assert.equal(s.initStd, 0.16);
  });

  it("gives every arch and preset whole head dims and kv groups", () => {
    for (const arch of ARCHS) {
      for (const preset of PRESETS) {
        const s = modelSpec(arch, preset);
        assert.ok(Number.isInteger(s.headDim), `${arch}/${preset}`);
        assert.equal(s.numHeads % s.numKvHeads, 0);
      }
    }
  });

  it("sets the architecture traits", () => {
    const q = modelSpec("qwen2", "base");
    assert.deepEqual([q.qkvBias, q.tieWordEmbeddings, q.ropeTheta], [true, true, 1e6]);
    const m = modelSpec("mixtral", "small");
    assert.deepEqual([m.numExperts, m.expertsPerToken, m.rmsNormEps], [4, 2, 1e-5]);
    assert.deepEqual(
      [modelSpec("llama", "small").qkvBias, modelSpec("mistral", "small").ropeTheta],
      [false, 10000],
    );
  });

  it("names the valid values for unknown ones", () => {
    assert.throws(
      () => modelSpec("gpt2", "tiny"),
      (e: unknown) =>
        e instanceof TesseraError &&
        e.code === Code.INVALID_ARGUMENT &&
        /unknown architecture "gpt2"; valid: llama, mistral, qwen2, mixtral/.test(e.message),
    );
    assert.throws(() => parsePreset("huge"), /unknown preset "huge"; valid: tiny, small, base/);
    assert.equal(parseArch("qwen2"), "qwen2");
  });
});
