import assert from "node:assert/strict";
import type { JsonObject } from "../../../../services/kube/kube-object.ts";
import { ensureObject, listAt, numberAt, objectAt, setDefault, stringAt } from "./object-fields.ts";

describe("object-fields", () => {
  it("reads typed values and creates missing objects", () => {
    const root: JsonObject = { spec: { n: 1, s: "x", list: [1] } };
    assert.deepEqual(
      [
        numberAt(root, "spec", "n"),
        stringAt(root, "spec", "s"),
        listAt(root, "spec", "list"),
        objectAt(root, "spec", "n"),
      ],
      [1, "x", [1], undefined],
    );
    setDefault(ensureObject(root, "status", "deep"), "ok", true);
    assert.deepEqual(root["status"], { deep: { ok: true } });
  });
});
