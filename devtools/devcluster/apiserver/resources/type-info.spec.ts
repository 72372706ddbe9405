import assert from "node:assert/strict";
import { fieldInfo, mapList, withMetadata } from "./type-info.ts";

describe("type-info", () => {
  it("looks up field info, falling back to element info for maps", () => {
    const info = withMetadata({ items: mapList(["name"], { fields: { x: { atomic: true } } }) });
    assert.deepEqual(fieldInfo(info, "items")?.list, { type: "map", keys: ["name"] });
    assert.equal(fieldInfo(fieldInfo(info, "items"), "anything")?.fields?.["x"]?.atomic, true);
    assert.deepEqual(fieldInfo(fieldInfo(info, "metadata"), "finalizers")?.list, { type: "set" });
  });
});
