import assert from "node:assert/strict";
import { type BlockQuantOptions, dequantizeBlocks, quantizeBlocks } from "./quantize-blocks.ts";

const OUT = 5;
const IN = 48; // one whole block of 32 and a partial one, as a tensor-parallel slice can have
const w = Float32Array.from({ length: OUT * IN }, (_, i) => Math.sin(i * 1.7) * (1 + (i % 7)));

describe("quantizeBlocks", () => {
  for (const [o, bound] of [
    [{ bits: 8, blockSize: 32, symmetric: true }, 0.5 / 127],
    [{ bits: 4, blockSize: 32, symmetric: true }, 0.5 / 7],
    [{ bits: 4, blockSize: 16, symmetric: false }, 0.5 / 15 + 1 / 15],
  ] as [BlockQuantOptions, number][]) {
    it(`${o.bits} bits, block ${o.blockSize}${o.symmetric ? "" : ", asymmetric"}: each value within half a step of its block's scale`, () => {
      const q = quantizeBlocks(w, OUT, IN, o);
      assert.equal(q.packed.length, OUT * Math.ceil(IN / o.blockSize) * ((o.blockSize * o.bits) / 8));
      assert.equal(q.zeroPoints === undefined, o.symmetric);
      const back = dequantizeBlocks(q, o);
      for (let r = 0; r < OUT; r++)
        for (let c = 0; c < IN; c++) {
          const blockMax = Math.max(
            ...Array.from(w.subarray(r * IN, (r + 1) * IN))
              .slice(
                Math.floor(c / o.blockSize) * o.blockSize,
                (Math.floor(c / o.blockSize) + 1) * o.blockSize,
              )
              .map(Math.abs),
          );
          const err = Math.abs(back[r * IN + c]! - w[r * IN + c]!);
          assert.ok(err <= bound * 2 * blockMax + 1e-6, `[${r}, ${c}] off by ${err}`);
        }
    });
  }

  it("refuses a block size MatMulNBits cannot take, naming it", () => {
    assert.throws(
      () => quantizeBlocks(w, OUT, IN, { bits: 4, blockSize: 24, symmetric: true }),
      /block size: 24 must be a power of two/,
    );
  });
});
