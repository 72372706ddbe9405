import assert from "node:assert/strict";
import { servedModelNameProblem } from "./served-model-name.ts";

describe("served model names", () => {
  it("takes Hugging Face ids, folder names and Ollama-style tags", () => {
    for (const name of [
      "q2",
      "Qwen2.5-0.5B-Instruct",
      "meta-llama/Llama-3.1-8B-Instruct",
      "llama3:8b",
      "a_b",
    ])
      assert.equal(servedModelNameProblem(name), undefined, name);
  });

  it("refuses empty names, names with spaces, an @ (the KV keys' separator) and a leading symbol", () => {
    assert.equal(servedModelNameProblem(""), "must not be empty");
    for (const name of ["my model", "q2@v1", "-q2", "/q2", "q2\n", "qwen\u00e9"])
      assert.match(servedModelNameProblem(name) ?? "", /is not a model name: use letters, digits/, name);
    assert.match(servedModelNameProblem("x".repeat(257)) ?? "", /at most 256/);
    assert.equal(servedModelNameProblem("x".repeat(256)), undefined);
  });
});
