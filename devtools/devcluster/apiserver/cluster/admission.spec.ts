import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { configMapKind } from "../resources/core-kinds.ts";
import { type AdmissionContext, admitCreate, admitUpdate, generateName } from "./admission.ts";

const ctx = (): AdmissionContext => ({
  now: Date.UTC(2025, 0, 1),
  fieldManager: "test",
  fieldValidation: "Strict",
  warnings: [],
});

describe("admission", () => {
  it("fills system metadata on create and generates names", () => {
    const made = admitCreate(
      configMapKind,
      {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { generateName: "cfg-", uid: "client", resourceVersion: "9" },
      },
      "ns",
      ctx(),
    );
    assert.match(made.metadata.name ?? "", /^cfg-[a-z0-9]{5}$/);
    assert.deepEqual(
      [
        made.metadata.namespace,
        made.metadata.generation,
        made.metadata.creationTimestamp,
        made.metadata.resourceVersion,
      ],
      ["ns", 1, "2025-01-01T00:00:00Z", undefined],
    );
    assert.notEqual(made.metadata.uid, "client");
    assert.equal(generateName("x".repeat(100)).length, 63);
  });

  it("keeps identity fields on update and forbids new finalizers while deleting", () => {
    const old = admitCreate(
      configMapKind,
      { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", finalizers: ["a"] } },
      "ns",
      ctx(),
    );
    const updated = admitUpdate(
      configMapKind,
      old,
      { ...old, metadata: { ...old.metadata, uid: "other", creationTimestamp: "x" } },
      ctx(),
    );
    assert.deepEqual(
      [updated.metadata.uid, updated.metadata.creationTimestamp],
      [old.metadata.uid, old.metadata.creationTimestamp],
    );
    const deleting = { ...old, metadata: { ...old.metadata, deletionTimestamp: "2025-01-01T00:00:00Z" } };
    assert.throws(
      () =>
        admitUpdate(
          configMapKind,
          deleting,
          { ...deleting, metadata: { ...deleting.metadata, finalizers: ["a", "b"] } },
          ctx(),
        ),
      (err) => statusCodeOf(err) === 422,
    );
    assert.throws(
      () =>
        admitUpdate(configMapKind, old, { ...old, metadata: { ...old.metadata, name: "renamed" } }, ctx()),
      (err) => statusCodeOf(err) === 400,
    );
  });
});
