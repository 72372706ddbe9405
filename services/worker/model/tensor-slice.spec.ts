import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { SafetensorsFile } from "./safetensors.ts";
import { evenPart, slicedShape, sliceRanges } from "./tensor-slice.ts";

/** A safetensors file with a [4, 6] matrix m (values 0..23) and a [6] vector v, in `dtype`. */
function writeFile(dtype: "F32" | "BF16"): string {
  const bpe = dtype === "F32" ? 4 : 2;
  const encode = (values: number[]) => {
    const f32 = Float32Array.from(values);
    if (dtype === "F32") return Buffer.from(f32.buffer);
    const bits = new Uint32Array(f32.buffer);
    return Buffer.from(Uint16Array.from(bits, (b) => b >>> 16).buffer);
  };
  const m = encode(Array.from({ length: 24 }, (_, i) => i));
  const v = encode([10, 11, 12, 13, 14, 15]);
  const header = JSON.stringify({
    m: { dtype, shape: [4, 6], data_offsets: [0, 24 * bpe] },
    v: { dtype, shape: [6], data_offsets: [24 * bpe, 30 * bpe] },
  });
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(header.length));
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "tessera-slice-")), "w.safetensors");
  fs.writeFileSync(file, Buffer.concat([len, Buffer.from(header), m, v]));
  return file;
}

describe("tensor slices", () => {
  it("plans one byte range for rows and one per row for columns", () => {
    assert.deepEqual(sliceRanges([4, 6], 2, { axis: 0, start: 1, end: 3 }), [{ offset: 12, length: 24 }]);
    assert.deepEqual(sliceRanges([2, 6], 4, { axis: 1, start: 2, end: 5 }), [
      { offset: 8, length: 12 },
      { offset: 32, length: 12 },
    ]);
    assert.deepEqual(sliceRanges([6], 4, { axis: 0, start: 3, end: 6 }), [{ offset: 12, length: 12 }]);
  });

  it("rejects slices that do not fit the tensor", () => {
    assert.throws(() => slicedShape([4, 6], { axis: 1, start: 4, end: 7 }), /does not fit/);
    assert.throws(() => slicedShape([6], { axis: 1, start: 0, end: 1 }), /cannot slice/);
    assert.throws(() => slicedShape([4, 6], { axis: 0, start: 2, end: 2 }), /does not fit/);
  });

  it("splits sizes into near-equal contiguous parts", () => {
    assert.deepEqual(
      [0, 1, 2].map((i) => evenPart(10, 3, i)),
      [
        { start: 0, end: 3 },
        { start: 3, end: 6 },
        { start: 6, end: 10 },
      ],
    );
  });

  for (const dtype of ["F32", "BF16"] as const)
    it(`reads row, column and vector slices of ${dtype} tensors equal to slicing the whole`, () => {
      const file = SafetensorsFile.open(writeFile(dtype));
      const rows = file.readSlice("m", { axis: 0, start: 1, end: 3 });
      assert.deepEqual(rows.shape, [2, 6]);
      assert.deepEqual([...rows.data], [...file.read("m").data.subarray(6, 18)]);
      const cols = file.readSlice("m", { axis: 1, start: 2, end: 4 });
      assert.deepEqual(cols.shape, [4, 2]);
      assert.deepEqual([...cols.data], [2, 3, 8, 9, 14, 15, 20, 21]);
      assert.deepEqual([...file.readSlice("v", { axis: 0, start: 4, end: 6 }).data], [14, 15]);
    });
});
