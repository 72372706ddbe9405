import assert from "node:assert/strict";
import { causeReason, fieldError, formatFieldError, joinField } from "./field-errors.ts";

describe("field-errors", () => {
  it("formats each error type like the Kubernetes field.Error", () => {
    assert.equal(formatFieldError(fieldError.required("spec.model")), "spec.model: Required value");
    assert.equal(
      formatFieldError(fieldError.invalid("spec.x", "a", "bad")),
      'spec.x: Invalid value: "a": bad',
    );
    assert.equal(
      formatFieldError(fieldError.invalid("spec", { a: 1 }, "bad")),
      'spec: Invalid value: "object": bad',
    );
    assert.equal(
      formatFieldError(fieldError.notSupported("spec.role", "x", ["a", "b"])),
      'spec.role: Unsupported value: "x": supported values: "a", "b"',
    );
    assert.equal(causeReason(fieldError.forbidden("f", "no")), "FieldValueForbidden");
  });

  it("joins field paths with dots and indexes", () => {
    assert.equal(joinField(joinField(joinField("", "spec"), "containers"), 0), "spec.containers[0]");
  });
});
