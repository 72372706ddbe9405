import assert from "node:assert/strict";
import type { JsonValue } from "../../../../services/kube/kube-object.ts";
import { formatFieldError } from "../core/field-errors.ts";
import { validateValue } from "./schema-validation.ts";
import type { StructuralSchema } from "./structural-schema.ts";

const messages = (value: JsonValue, schema: StructuralSchema) =>
  validateValue(value, schema, "spec").map(formatFieldError);

describe("schema-validation", () => {
  it("reports types, bounds, lengths, patterns and enums like go-openapi", () => {
    assert.deepEqual(messages("x", { type: "integer" }), [
      'spec: Invalid value: "x": spec in body must be of type integer: "string"',
    ]);
    assert.deepEqual(messages(-1, { type: "integer", minimum: 0 }), [
      "spec: Invalid value: -1: spec in body should be greater than or equal to 0",
    ]);
    assert.deepEqual(messages(5, { type: "integer", maximum: 5, exclusiveMaximum: true }), [
      "spec: Invalid value: 5: spec in body should be less than 5",
    ]);
    assert.deepEqual(messages("", { type: "string", minLength: 1 }), [
      'spec: Invalid value: "": spec in body should be at least 1 chars long',
    ]);
    assert.deepEqual(messages("A", { type: "string", pattern: "^[a-z]+$" }), [
      "spec: Invalid value: \"A\": spec in body should match '^[a-z]+$'",
    ]);
    assert.deepEqual(messages("c", { type: "string", enum: ["a", "b"] }), [
      'spec: Unsupported value: "c": supported values: "a", "b"',
    ]);
  });

  it("checks required fields, nested paths, list-map uniqueness and int-or-string", () => {
    const schema: StructuralSchema = {
      type: "object",
      required: ["model"],
      properties: {
        ports: {
          type: "array",
          "x-kubernetes-list-type": "map",
          "x-kubernetes-list-map-keys": ["name"],
          items: {
            type: "object",
            properties: { name: { type: "string" }, port: { "x-kubernetes-int-or-string": true } },
          },
        },
      },
    };
    const errors = messages(
      {
        ports: [
          { name: "a", port: "http" },
          { name: "a", port: 1.5 },
        ],
      },
      schema,
    );
    assert.deepEqual(errors, [
      "spec.model: Required value",
      'spec.ports[1]: Duplicate value: "object"',
      'spec.ports[1].port: Invalid value: 1.5: spec.ports[1].port in body must be of type integer,string: "number"',
    ]);
    assert.deepEqual(messages(null, { type: "string", nullable: true }), []);
  });
});
