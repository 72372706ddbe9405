import assert from "node:assert/strict";
import { prefixBlockHashes } from "../../inference/block-hash.ts";
import { positionOfHex } from "./hash-ring.ts";
import { routingKey } from "./routing-key.ts";

const system = Array.from({ length: 70 }, (_, i) => (i * 31) % 500);
const key = (promptIds: number[], sessionKey?: string) =>
  routingKey({ promptIds, blockSize: 16, salt: "m@r1", prefixBlocks: 4, sessionKey });

describe("routingKey", () => {
  it("is the workers' block hash of the last leading block, shared by prompts with that prefix", () => {
    const a = key([...system, 1, 2, 3]);
    const b = key([...system, 9, 9]);
    assert.equal(a.source, "prefix");
    assert.equal(a.position, b.position);
    const workerHashes = prefixBlockHashes(system, 16, "m@r1");
    assert.deepEqual(a.blockHashes, workerHashes.slice(0, 4));
    assert.equal(a.position, positionOfHex(workerHashes[3]!));
  });

  it("differs when the prefix or the model revision differs", () => {
    const other = [...system];
    other[5] = 7;
    assert.notEqual(key(other).position, key(system).position);
    const revised = routingKey({ promptIds: system, blockSize: 16, salt: "m@r2", prefixBlocks: 4 });
    assert.notEqual(revised.position, key(system).position);
  });

  it("uses the session key when there is one", () => {
    const a = key(system, "conversation-1");
    assert.equal(a.source, "session");
    assert.equal(a.position, key([1, 2, 3], "conversation-1").position);
    assert.notEqual(a.position, key(system, "conversation-2").position);
  });

  it("keys a prompt shorter than a block by its tokens", () => {
    assert.equal(key([1, 2, 3]).source, "prompt");
    assert.equal(key([1, 2, 3]).position, key([1, 2, 3]).position);
    assert.notEqual(key([1, 2, 3]).position, key([1, 2, 4]).position);
  });
});
