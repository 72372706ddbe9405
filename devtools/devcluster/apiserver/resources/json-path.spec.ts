import assert from "node:assert/strict";
import { evaluateJsonPath, jsonPathValue } from "./json-path.ts";

const object = {
  status: {
    replicas: 2,
    conditions: [
      { type: "Ready", status: "True" },
      { type: "Synced", status: "False" },
    ],
  },
  spec: { items: [{ n: 1 }, { n: 2 }] },
};

describe("json-path", () => {
  it("follows fields, indexes, wildcards and equality filters", () => {
    assert.equal(jsonPathValue(object, ".status.replicas"), 2);
    assert.equal(jsonPathValue(object, "{.spec.items[1].n}"), 2);
    assert.deepEqual(evaluateJsonPath(object, ".spec.items[*].n"), [1, 2]);
    assert.equal(jsonPathValue(object, '.status.conditions[?(@.type=="Ready")].status'), "True");
    assert.equal(jsonPathValue(object, ".status.missing"), undefined);
  });
});
