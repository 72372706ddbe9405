import assert from "node:assert/strict";
import { dtypeProblem, modelInput } from "./serve-model-flags.ts";

describe("serve architecture and dtype", () => {
  const fromFlag = (key: "architecture" | "dtype") => `--${key}`;

  it("resolves a model_type or an architectures name to the registry's name", () => {
    assert.deepEqual(modelInput({ architecture: "llama", dtype: "bfloat16" }, fromFlag).value, {
      architecture: "LlamaForCausalLM",
      dtype: "bfloat16",
    });
    assert.deepEqual(modelInput({ architecture: "Qwen2ForCausalLM", dtype: "float32" }, fromFlag).value, {
      architecture: "Qwen2ForCausalLM",
      dtype: "float32",
    });
    assert.deepEqual(modelInput({ architecture: " mixtral ", dtype: "auto" }, fromFlag).value, {
      architecture: "MixtralForCausalLM",
    });
  });

  it("leaves auto to the checkpoint", () => {
    assert.deepEqual(modelInput({ architecture: "auto", dtype: "auto" }, fromFlag).value, {});
  });

  it("names the variable or the flag a bad value came from", () => {
    const fromEnv = (key: "architecture" | "dtype") => `TESSERA_${key.toUpperCase()}`;
    const arch = modelInput({ architecture: "gpt2", dtype: "auto" }, fromEnv).error;
    assert.match(
      arch!.message,
      /^TESSERA_ARCHITECTURE: unsupported architecture "gpt2"; supported: auto, .*llama/,
    );
    const dtype = modelInput({ architecture: "auto", dtype: "int8" }, fromEnv).error;
    assert.equal(
      dtype?.message,
      'TESSERA_DTYPE: unsupported dtype "int8"; supported: auto, float32, float16, bfloat16',
    );
    assert.match(
      modelInput({ architecture: "auto", dtype: "fp16" }, fromFlag).error!.message,
      /^--dtype: unsupported dtype "fp16"/,
    );
  });

  it("serves a checkpoint in its own dtype or float32, and refuses a conversion it cannot make", () => {
    assert.equal(dtypeProblem(undefined, "bfloat16"), undefined);
    assert.equal(dtypeProblem("bfloat16", "bfloat16"), undefined);
    assert.equal(dtypeProblem("float32", "float16"), undefined);
    assert.match(dtypeProblem("float16", "float32")!, /weights are float32 and converting them at load/);
  });
});
