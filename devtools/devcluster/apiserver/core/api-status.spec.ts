import assert from "node:assert/strict";
import { Code, TesseraError } from "../../../../services/kernel/errors.ts";
import { apiErrors, statusCodeOf, toStatus } from "./api-status.ts";
import { fieldError } from "./field-errors.ts";

describe("api-status", () => {
  it("formats NotFound, AlreadyExists and Conflict the way kubectl prints them", () => {
    assert.equal(
      toStatus(apiErrors.notFound({ group: "apps", resource: "deployments", name: "web" })).message,
      'deployments.apps "web" not found',
    );
    const exists = toStatus(apiErrors.alreadyExists({ group: "", resource: "pods", name: "p" }));
    assert.deepEqual(
      [exists.code, exists.reason, exists.message],
      [409, "AlreadyExists", 'pods "p" already exists'],
    );
    assert.equal(
      toStatus(apiErrors.conflict({ group: "", resource: "pods", name: "p" }, "why")).reason,
      "Conflict",
    );
  });

  it("lists one cause per field error in a 422", () => {
    const status = toStatus(
      apiErrors.invalid("Widget", "example.dev", "w", [
        fieldError.required("spec.model"),
        fieldError.invalid("spec.replicas", -1, "must be >= 0"),
      ]),
    );
    assert.equal(status.code, 422);
    assert.equal(
      status.message,
      'Widget.example.dev "w" is invalid: [spec.model: Required value, spec.replicas: Invalid value: -1: must be >= 0]',
    );
    assert.deepEqual(
      status.details?.causes?.map((c) => c.field),
      ["spec.model", "spec.replicas"],
    );
  });

  it("carries gRPC codes and maps foreign errors to 500", () => {
    assert.equal(
      apiErrors.alreadyExists({ group: "", resource: "pods", name: "p" }).code,
      Code.ALREADY_EXISTS,
    );
    assert.equal(statusCodeOf(new Error("boom")), 500);
    assert.equal(statusCodeOf(new TesseraError(Code.NOT_FOUND, "x")), 404);
  });
});
