import assert from "node:assert/strict";
import { blockHash, prefixBlockHashes } from "./block-hash.ts";

describe("block hashes", () => {
  const tokens = Array.from({ length: 40 }, (_, i) => (i * 7919) % 512);

  it("hashes full blocks only, each chained to its parent", () => {
    const hashes = prefixBlockHashes(tokens, 16, "m@1");
    assert.equal(hashes.length, 2);
    assert.equal(hashes[0], blockHash(undefined, tokens.slice(0, 16), "m@1"));
    assert.equal(hashes[1], blockHash(hashes[0], tokens.slice(16, 32), "m@1"));
  });

  it("differs when any earlier token, the salt or the position in the chain differs", () => {
    const base = prefixBlockHashes(tokens, 16, "m@1");
    const changed = [...tokens];
    changed[3] = 99;
    assert.notEqual(prefixBlockHashes(changed, 16, "m@1")[1], base[1]);
    assert.notEqual(prefixBlockHashes(tokens, 16, "m@2")[0], base[0]);
    assert.notEqual(blockHash(base[0], tokens.slice(0, 16), "m@1"), base[0]);
  });

  it("is shared by every prompt with the same prefix", () => {
    const a = prefixBlockHashes([...tokens.slice(0, 32), 1, 2, 3], 16, "s");
    const b = prefixBlockHashes([...tokens.slice(0, 32), 9, 9, 9, 9, 9], 16, "s");
    assert.deepEqual(a, b);
  });
});
