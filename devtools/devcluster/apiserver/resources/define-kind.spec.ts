import assert from "node:assert/strict";
import { column, defineKind } from "./define-kind.ts";

describe("define-kind", () => {
  it("fills names, list kind, metadata merge info and the AGE column", () => {
    const kind = defineKind({
      group: "x.dev",
      version: "v1",
      kind: "Gizmo",
      plural: "gizmos",
      namespaced: true,
      columns: [column("Size", () => 1, { type: "integer" })],
    });
    assert.deepEqual(
      [kind.listKind, kind.singular, kind.storageVersion, kind.nameRule],
      ["GizmoList", "gizmo", "v1", "subdomain"],
    );
    assert.deepEqual(
      kind.printerColumns.map((c) => c.name),
      ["Size", "Age"],
    );
    assert.ok(kind.typeInfo.fields?.["metadata"]);
  });
});
