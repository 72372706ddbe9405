import assert from "node:assert/strict";
import { payloadDims, payloadFloats, validateFormat } from "./kv-block.ts";
import { baseFormat, testFormat } from "./kv-test-blocks.ts";

describe("KV block format", () => {
  it("lays a block out as [layers, 2, blockSize, kvHeads, headDim]", () => {
    assert.deepEqual(payloadDims(testFormat()), [2, 2, 4, 2, 8]);
    assert.equal(payloadFloats(baseFormat()) * 4, 384 * 1024);
  });

  it("accepts a valid format and names the field of an invalid one", () => {
    assert.ok(validateFormat(testFormat()).value);
    assert.match(validateFormat(testFormat({ modelId: "" })).error!.message, /modelId: must not be empty/);
    assert.match(
      validateFormat(testFormat({ layerRange: { start: 3, end: 3 } })).error!.message,
      /layerRange: \[3, 3\) is not a non-empty range/,
    );
    const shape = { blockSize: 16, kvHeads: 0, headDim: 64 };
    assert.match(
      validateFormat(testFormat({ shape })).error!.message,
      /shape.kvHeads: 0 is not a positive integer/,
    );
  });
});
