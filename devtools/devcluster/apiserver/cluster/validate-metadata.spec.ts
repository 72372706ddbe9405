import assert from "node:assert/strict";
import { nameErrors, validateMetadata } from "./validate-metadata.ts";

describe("validate-metadata", () => {
  it("applies the DNS label, subdomain and path segment name rules", () => {
    assert.deepEqual(nameErrors("web-1", "label"), []);
    assert.equal(nameErrors("a.b", "label").length, 1);
    assert.deepEqual(nameErrors("a.b", "subdomain"), []);
    assert.deepEqual(nameErrors("system:admin", "path-segment"), []);
    assert.equal(nameErrors("a/b", "path-segment").length, 1);
  });

  it("requires a name and checks label keys and values", () => {
    const errors = validateMetadata(
      { apiVersion: "v1", kind: "X", metadata: { labels: { "bad key": "ok", good: "bad value" } } },
      "subdomain",
    );
    assert.deepEqual(
      errors.map((e) => e.field),
      ["metadata.name", "metadata.labels", "metadata.labels"],
    );
  });
});
