import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { statusCodeOf } from "../core/api-status.ts";
import { defineKind } from "../resources/define-kind.ts";
import { pruneAndDefault, validateCustomObject } from "./custom-object-validation.ts";

const type = {
  ...defineKind({ group: "example.dev", version: "v1", kind: "Thing", plural: "things", namespaced: true }),
  schema: {
    type: "object" as const,
    required: ["spec"],
    "x-kubernetes-validations": [{ rule: "self.metadata.name != 'forbidden'", message: "name is taken" }],
    properties: {
      spec: {
        type: "object" as const,
        properties: { n: { type: "integer" as const, default: 1, minimum: 0 } },
      },
    },
  },
};
const thing = (name: string, spec?: unknown): KubeObject => ({
  apiVersion: "example.dev/v1",
  kind: "Thing",
  metadata: { name },
  ...(spec !== undefined ? { spec } : {}),
});

describe("custom-object-validation", () => {
  it("prunes (warning, or 400 under Strict) and defaults", () => {
    const object = thing("t", { extra: true });
    assert.deepEqual(pruneAndDefault(type, object, "Warn"), ['unknown field "spec.extra"']);
    assert.deepEqual(object["spec"], { n: 1 });
    assert.throws(
      () => pruneAndDefault(type, thing("t", { extra: true }), "Strict"),
      (err) => statusCodeOf(err) === 400,
    );
  });

  it("validates the schema and root CEL rules", () => {
    assert.deepEqual(
      validateCustomObject(type, thing("t", { n: -1 }), undefined).map((e) => e.field),
      ["spec.n"],
    );
    assert.deepEqual(
      validateCustomObject(type, thing("t"), undefined).map((e) => e.field),
      ["spec"],
    );
    assert.deepEqual(
      validateCustomObject(type, thing("forbidden", { n: 1 }), undefined).map((e) => e.detail),
      ["name is taken"],
    );
  });
});
