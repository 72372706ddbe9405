import assert from "node:assert/strict";
import { configMapKind } from "../resources/core-kinds.ts";
import { negotiateRendering, toTable } from "./table.ts";

describe("table", () => {
  it("negotiates Table, PartialObjectMetadata or plain objects from Accept", () => {
    assert.deepEqual(negotiateRendering("application/json;as=Table;v=v1;g=meta.k8s.io,application/json"), {
      kind: "table",
      version: "v1",
    });
    assert.deepEqual(negotiateRendering("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"), {
      kind: "metadata",
      version: "v1",
    });
    assert.deepEqual(negotiateRendering("application/json"), { kind: "object" });
    assert.deepEqual(negotiateRendering(undefined), { kind: "object" });
  });

  it("renders rows of the printer columns with the object's metadata", () => {
    const now = Date.UTC(2025, 0, 1, 0, 1, 0);
    const cm = {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "c", creationTimestamp: "2025-01-01T00:00:00Z" },
      data: { a: "1" },
    };
    const table = toTable(configMapKind, [cm], { now, version: "v1", include: "Metadata" }) as {
      columnDefinitions: { name: string }[];
      rows: { cells: unknown[]; object: { kind: string } }[];
    };
    assert.deepEqual(
      table.columnDefinitions.map((c) => c.name),
      ["Name", "Data", "Age"],
    );
    assert.deepEqual(table.rows[0]?.cells, ["c", 1, "60s"]);
    assert.equal(table.rows[0]?.object.kind, "PartialObjectMetadata");
  });
});
