import assert from "node:assert/strict";
import { pruneObject } from "./prune.ts";
import type { StructuralSchema } from "./structural-schema.ts";

const schema: StructuralSchema = {
  type: "object",
  properties: {
    spec: {
      type: "object",
      properties: {
        known: { type: "string" },
        free: { type: "object", "x-kubernetes-preserve-unknown-fields": true },
        labels: { type: "object", additionalProperties: { type: "string" } },
        items: { type: "array", items: { type: "object", properties: { name: { type: "string" } } } },
      },
    },
  },
};

describe("prune", () => {
  it("drops undeclared fields, keeps preserved and map fields, and reports what it dropped", () => {
    const object = {
      apiVersion: "v1",
      kind: "X",
      metadata: { name: "x" },
      spec: { known: "a", extra: 1, free: { any: 1 }, labels: { k: "v" }, items: [{ name: "n", junk: 1 }] },
      top: 1,
    };
    const removed = pruneObject(object, schema);
    assert.deepEqual(removed.sort(), ["spec.extra", "spec.items[0].junk", "top"]);
    assert.deepEqual(object.spec, {
      known: "a",
      free: { any: 1 },
      labels: { k: "v" },
      items: [{ name: "n" }],
    });
    assert.deepEqual(object.metadata, { name: "x" });
  });
});
