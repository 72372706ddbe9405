import assert from "node:assert/strict";
import { formatFieldError } from "../core/field-errors.ts";
import { checkCelRules, compileErrors, toCel } from "./cel-rules.ts";
import type { StructuralSchema } from "./structural-schema.ts";

const spec: StructuralSchema = {
  type: "object",
  "x-kubernetes-validations": [
    { rule: "self.replicas <= self.max", message: "replicas must not exceed max" },
  ],
  properties: {
    replicas: {
      type: "integer",
      "x-kubernetes-validations": [{ rule: "self >= oldSelf", message: "may only grow" }],
    },
    max: { type: "integer" },
    name: {
      type: "string",
      "x-kubernetes-validations": [{ rule: "self.startsWith('w')", reason: "FieldValueForbidden" }],
    },
  },
};

describe("cel-rules", () => {
  it("evaluates rules with self typed by the schema (integers as CEL ints)", () => {
    assert.equal(typeof toCel(3, { type: "integer" }), "bigint");
    assert.equal(typeof toCel(3, { type: "number" }), "number");
    assert.deepEqual(checkCelRules({ replicas: 2, max: 3, name: "web" }, undefined, spec, "spec"), []);
    assert.deepEqual(
      checkCelRules({ replicas: 4, max: 3, name: "db" }, undefined, spec, "spec").map(formatFieldError),
      [
        'spec: Invalid value: "object": replicas must not exceed max',
        "spec.name: Forbidden: failed rule: self.startsWith('w')",
      ],
    );
  });

  it("runs transition rules only on update, against the old value", () => {
    assert.deepEqual(
      checkCelRules({ replicas: 1, max: 3, name: "w" }, { replicas: 2, max: 3, name: "w" }, spec, "spec").map(
        formatFieldError,
      ),
      ["spec.replicas: Invalid value: 1: may only grow"],
    );
  });

  it("reports rules that do not compile", () => {
    const errors = compileErrors(
      { type: "object", "x-kubernetes-validations": [{ rule: "self.x ==" }] },
      "schema",
    );
    assert.equal(errors.length, 1);
    assert.equal(errors[0]?.field, "schema.x-kubernetes-validations[0].rule");
  });
});
