import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { compileFilter } from "./selection.ts";

describe("selection", () => {
  it("combines namespace, label and field filters, and rejects bad selectors with 400", () => {
    const filter = compileFilter({
      namespace: "a",
      labelSelector: "app=web",
      fieldSelector: "metadata.name=x",
    });
    assert.ok(
      filter({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "x", namespace: "a", labels: { app: "web" } },
      }),
    );
    assert.ok(
      !filter({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "x", namespace: "b", labels: { app: "web" } },
      }),
    );
    assert.throws(
      () => compileFilter({ labelSelector: "bad key" }),
      (err) => statusCodeOf(err) === 400,
    );
  });
});
