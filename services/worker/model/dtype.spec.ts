import assert from "node:assert/strict";
import { bf16ToF32, f16ToF32, toFloat32 } from "./dtype.ts";

describe("dtype", () => {
  it("decodes half precision exactly, subnormals and infinities included", () => {
    const halves = new Uint16Array([0x3c00, 0xc000, 0x0001, 0x7bff, 0x7c00, 0xfc00, 0x0000, 0x8000, 0x3555]);
    const f = f16ToF32(halves);
    assert.deepEqual(Array.from(f.subarray(0, 7)), [1, -2, 2 ** -24, 65504, Infinity, -Infinity, 0]);
    assert.ok(Object.is(f[7], -0));
    assert.ok(Math.abs(f[8]! - 0.333251953125) < 1e-12);
    assert.ok(Number.isNaN(f16ToF32(new Uint16Array([0x7e00]))[0]));
  });

  it("decodes bfloat16 as the top half of a float32", () => {
    assert.deepEqual(Array.from(bf16ToF32(new Uint16Array([0x3f80, 0xc040, 0x3e00]))), [1, -3, 0.125]);
  });

  it("reads float32 from unaligned bytes", () => {
    const buf = new Uint8Array(9);
    new DataView(buf.buffer).setFloat32(1, 1.5, true);
    assert.deepEqual(Array.from(toFloat32(buf.subarray(1, 5), "F32")), [1.5]);
  });
});
