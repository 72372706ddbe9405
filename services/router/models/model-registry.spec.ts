import assert from "node:assert/strict";
import { Code } from "../../kernel/errors.ts";
import { testModel } from "../testing/models.ts";
import { ModelRegistry } from "./model-registry.ts";

describe("ModelRegistry", () => {
  it("resolves a model by id, the only one by an empty name, and refuses unknown ones", () => {
    const one = new ModelRegistry([testModel({ id: "a" })]);
    assert.equal(one.resolve("").value?.id, "a");
    assert.equal(one.resolve("a").value?.id, "a");
    assert.equal(one.resolve("b").error?.code, Code.NOT_FOUND);
    const two = new ModelRegistry([testModel({ id: "a" }), testModel({ id: "b" })]);
    assert.match(two.resolve("").error?.message ?? "", /^model: required: this router serves a, b/);
  });
});
