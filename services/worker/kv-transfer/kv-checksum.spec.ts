import assert from "node:assert/strict";
import { xxhash64 } from "./kv-checksum.ts";

describe("xxhash64", () => {
  it("matches the reference vectors of XXH64 (seed 0)", () => {
    assert.equal(xxhash64(new Uint8Array()), 0xef46db3751d8e999n);
    assert.equal(xxhash64(Buffer.from("a")), 0xd24ec4f1a98c6e5bn);
  });

  it("hashes the concatenation of its parts", () => {
    const bytes = Buffer.from("tessera kv block");
    assert.equal(xxhash64(bytes.subarray(0, 5), bytes.subarray(5)), xxhash64(bytes));
    assert.notEqual(xxhash64(Buffer.from("tessera kv blocK")), xxhash64(bytes));
  });
});
