import assert from "node:assert/strict";
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { applyDefaults } from "./defaulting.ts";

describe("defaulting", () => {
  it("fills absent properties with their defaults, depth first, in list items too", () => {
    const value: JsonObject = { spec: { items: [{}, { mode: "slow" }] } };
    applyDefaults(value, {
      type: "object",
      properties: {
        spec: {
          type: "object",
          properties: {
            replicas: { type: "integer", default: 1 },
            items: {
              type: "array",
              items: { type: "object", properties: { mode: { type: "string", default: "fast" } } },
            },
          },
        },
      },
    });
    assert.deepEqual(value, { spec: { replicas: 1, items: [{ mode: "fast" }, { mode: "slow" }] } });
  });
});
