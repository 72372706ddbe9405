import assert from "node:assert/strict";
import { keepsUnknownFields, propertySchema } from "./structural-schema.ts";

describe("structural-schema", () => {
  it("finds property schemas (named, then additionalProperties) and knows when unknown fields stay", () => {
    const schema = {
      type: "object" as const,
      properties: { a: { type: "string" as const } },
      additionalProperties: { type: "integer" as const },
    };
    assert.equal(propertySchema(schema, "a")?.type, "string");
    assert.equal(propertySchema(schema, "other")?.type, "integer");
    assert.ok(keepsUnknownFields(schema));
    assert.ok(!keepsUnknownFields({ type: "object", properties: {} }));
    assert.ok(keepsUnknownFields({ "x-kubernetes-preserve-unknown-fields": true }));
  });
});
