import assert from "node:assert/strict";
import { Rng } from "../model-factory/prng.ts";
import {
  dequantizeQ4_0,
  dequantizeQ8_0,
  f16ToNumber,
  Q4_0_BLOCK_BYTES,
  Q8_0_BLOCK_BYTES,
  quantizeQ4_0,
  quantizeQ8_0,
} from "./ggml-quants.ts";

function randomValues(n: number, seed: number): Float32Array {
  return new Rng(seed).fillNormal(new Float32Array(n), 0.05);
}

const scaleOf = (blocks: Uint8Array, at: number) => f16ToNumber(blocks[at]! | (blocks[at + 1]! << 8));

describe("ggml-quants", () => {
  describe("Q8_0", () => {
    it("writes a block as ggml does: half scale max|x|/127, then int8 codes round(x/d)", () => {
      const x = Float32Array.from({ length: 32 }, (_, j) => (j - 16) * 2); // -32 .. 30; max |x| = 32
      const q = quantizeQ8_0(x);
      assert.equal(q.length, Q8_0_BLOCK_BYTES);
      const d = Math.fround(32 / 127);
      assert.equal(scaleOf(q, 0), f16ToNumber(0x3408)); // 32/127 = 0.25197 -> half 0x3408 (0.251953125)
      const codes = [...new Int8Array(q.buffer, 2, 32)];
      assert.deepEqual(
        codes,
        [...x].map((v) => Math.sign(v) * Math.round(Math.abs(v) / d)),
      );
      assert.equal(codes[0], -127);
    });

    it("rounds halves away from zero, as C's roundf", () => {
      const x = new Float32Array(32);
      x[0] = 127; // d = 1
      x[1] = 2.5;
      x[2] = -2.5;
      const codes = new Int8Array(quantizeQ8_0(x).buffer, 2, 32);
      assert.deepEqual([codes[1], codes[2]], [3, -3]);
    });

    it("round-trips within half a step of each block's scale", () => {
      const x = randomValues(32 * 64, 1);
      const q = quantizeQ8_0(x);
      const y = dequantizeQ8_0(q);
      for (let b = 0; b < 64; b++) {
        const d = scaleOf(q, b * Q8_0_BLOCK_BYTES);
        for (let j = 0; j < 32; j++) {
          const i = b * 32 + j;
          assert.ok(Math.abs(y[i]! - x[i]!) <= d * 0.5 + Math.abs(x[i]!) * 2e-3, `value ${i}`);
        }
      }
    });

    it("keeps an all-zero block zero", () => {
      assert.deepEqual([...dequantizeQ8_0(quantizeQ8_0(new Float32Array(32)))], new Array(32).fill(0));
    });
  });

  describe("Q4_0", () => {
    it("packs value j in the low nibble and value j+16 in the high nibble, d = -(signed max)/8", () => {
      // The largest magnitude is -8, so d = 1 and q = x + 8.
      const x = Float32Array.from({ length: 32 }, (_, j) => (j < 16 ? j - 8 : 7 - (j - 16)));
      const q = quantizeQ4_0(x);
      assert.equal(q.length, Q4_0_BLOCK_BYTES);
      assert.equal(scaleOf(q, 0), 1);
      for (let j = 0; j < 16; j++) assert.equal(q[2 + j], (x[j]! + 8) | ((x[j + 16]! + 8) << 4), `byte ${j}`);
      assert.deepEqual([...dequantizeQ4_0(q)], [...x]);
    });

    it("takes the sign of the largest value: a positive maximum gives a negative scale", () => {
      const x = new Float32Array(32);
      x[3] = 4;
      x[4] = -1;
      const q = quantizeQ4_0(x);
      assert.equal(scaleOf(q, 0), -0.5);
      assert.equal(q[2 + 3]! & 0x0f, 0); // 4 / -0.5 = -8 -> code 0
      assert.equal(q[2 + 4]! & 0x0f, 10); // -1 / -0.5 = 2 -> code 10
    });

    it("round-trips within one step of each block's scale (the far end clamps at code 15)", () => {
      const x = randomValues(32 * 64, 2);
      const q = quantizeQ4_0(x);
      const y = dequantizeQ4_0(q);
      for (let b = 0; b < 64; b++) {
        const d = Math.abs(scaleOf(q, b * Q4_0_BLOCK_BYTES));
        for (let j = 0; j < 32; j++) {
          const i = b * 32 + j;
          assert.ok(Math.abs(y[i]! - x[i]!) <= d * 1.01, `value ${i}`);
        }
      }
      const err = x.reduce((s, v, i) => s + Math.abs(v - y[i]!), 0) / x.length;
      const mean = x.reduce((s, v) => s + Math.abs(v), 0) / x.length;
      assert.ok(err < mean * 0.2, `mean error ${err} vs mean |x| ${mean}`);
    });
  });

  it("refuses rows that are not whole blocks", () => {
    assert.throws(() => quantizeQ8_0(new Float32Array(31)), /multiple of 32/);
    assert.throws(() => quantizeQ4_0(new Float32Array(33)), /multiple of 32/);
  });
});
