import assert from "node:assert/strict";
import { dtypeProblem, modelInput } from "./serve-model-flags.ts";

describe("serve architecture and dtype (flags, else the operator's environment)", () => {
  it("reads TESSERA_ARCHITECTURE and TESSERA_DTYPE where no flag is given", () => {
    const env = { TESSERA_ARCHITECTURE: "llama", TESSERA_DTYPE: "bfloat16" };
    assert.deepEqual(modelInput({}, env).value, { architecture: "LlamaForCausalLM", dtype: "bfloat16" });
    assert.deepEqual(modelInput({ architecture: "Qwen2ForCausalLM", dtype: "float32" }, env).value, {
      architecture: "Qwen2ForCausalLM",
      dtype: "float32",
    });
    assert.deepEqual(modelInput({}, { TESSERA_ARCHITECTURE: "mixtral" }).value, {
      architecture: "MixtralForCausalLM",
    });
  });

  it("leaves auto, empty and absent to the checkpoint", () => {
    assert.deepEqual(modelInput({}, {}).value, {});
    assert.deepEqual(modelInput({}, { TESSERA_ARCHITECTURE: "auto", TESSERA_DTYPE: " " }).value, {});
    assert.deepEqual(modelInput({ dtype: "auto" }, { TESSERA_DTYPE: "float16" }).value, {});
  });

  it("names the variable or the flag a bad value came from", () => {
    const arch = modelInput({}, { TESSERA_ARCHITECTURE: "gpt2" }).error;
    assert.match(
      arch!.message,
      /^TESSERA_ARCHITECTURE: unsupported architecture "gpt2"; supported: auto, .*llama/,
    );
    const dtype = modelInput({}, { TESSERA_DTYPE: "int8" }).error;
    assert.equal(
      dtype?.message,
      'TESSERA_DTYPE: unsupported dtype "int8"; supported: auto, float32, float16, bfloat16',
    );
    assert.match(modelInput({ dtype: "fp16" }, {}).error!.message, /^--dtype: unsupported dtype "fp16"/);
  });

  it("serves a checkpoint in its own dtype or float32, and refuses a conversion it cannot make", () => {
    assert.equal(dtypeProblem(undefined, "bfloat16"), undefined);
    assert.equal(dtypeProblem("bfloat16", "bfloat16"), undefined);
    assert.equal(dtypeProblem("float32", "float16"), undefined);
    assert.match(dtypeProblem("float16", "float32")!, /weights are float32 and converting them at load/);
  });
});
