import assert from "node:assert/strict";
import { matchesFields, parseFieldSelector, selectedName } from "./field-selector.ts";

describe("field-selector", () => {
  const pod = {
    metadata: { name: "p", namespace: "ns" },
    spec: { nodeName: "node-1" },
    status: { phase: "Running" },
  };

  it("matches equality and inequality on any dotted field; absent fields read as empty", () => {
    assert.ok(matchesFields(parseFieldSelector("metadata.name=p,spec.nodeName==node-1").value!, pod));
    assert.ok(matchesFields(parseFieldSelector("status.phase!=Succeeded").value!, pod));
    assert.ok(matchesFields(parseFieldSelector("spec.missing=").value!, pod));
    assert.ok(!matchesFields(parseFieldSelector("metadata.namespace=other").value!, pod));
  });

  it("rejects terms without an operator and finds a pinned name", () => {
    assert.ok(parseFieldSelector("metadata.name").error);
    assert.equal(selectedName(parseFieldSelector("metadata.name=web").value!), "web");
  });
});
