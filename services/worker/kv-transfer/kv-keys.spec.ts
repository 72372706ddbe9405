import assert from "node:assert/strict";
import { blockKeyPrefix, checkModelId, modelKeyPattern } from "./kv-keys.ts";
import { testFormat } from "./kv-test-blocks.ts";

describe("KV block keys", () => {
  it("name the model revision and layer range, and match every key of one model", () => {
    assert.equal(blockKeyPrefix("tessera:kv:", testFormat()), "tessera:kv:tiny@r1:2-4:");
    assert.equal(modelKeyPattern("tessera:kv:", "tiny"), "tessera:kv:tiny@*");
    assert.equal(modelKeyPattern("kv[1]:", "org/m*?"), "kv\\[1\\]:org/m\\*\\?@*");
  });

  it("refuse model ids with '@', which would make one model's pattern match another's keys", () => {
    assert.match(checkModelId("a@b") ?? "", /contains "@"/);
    assert.equal(checkModelId("org/model"), undefined);
  });
});
