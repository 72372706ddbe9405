// The layouts the committed fixtures do not cover (runtime/prequantized-checkpoint.spec.ts checks
// 4-bit GPTQ v1, act-order and AWQ GEMM against devtools/reference/prequantized.py): 8-bit GPTQ v2
// and one group over a whole row, packed here by AutoGPTQ's rule (input rows 32/bits per int32, lowest
// bits first; zeros packed along the output features), and what cannot be repacked.
import assert from "node:assert/strict";
import type { PrequantizedFormat } from "./prequantized-config.ts";
import { type PackedTensors, repackPrequantized } from "./prequantized-repack.ts";
import { dequantizeBlocks } from "./quantize-blocks.ts";

/** GPTQ packing of codes q [in][out] and zeros z [groups][out] (stored as z - offset). */
function packGptq(
  q: number[][],
  z: number[][],
  bits: number,
  offset: number,
): { qweight: Int32Array; qzeros: Int32Array } {
  const per = 32 / bits;
  const inDim = q.length;
  const out = q[0]!.length;
  const qweight = new Int32Array((inDim / per) * out);
  for (let i = 0; i < inDim; i++)
    for (let o = 0; o < out; o++) qweight[Math.floor(i / per) * out + o]! |= q[i]![o]! << (bits * (i % per));
  const qzeros = new Int32Array(z.length * (out / per));
  for (let g = 0; g < z.length; g++)
    for (let o = 0; o < out; o++)
      qzeros[g * (out / per) + Math.floor(o / per)]! |= (z[g]![o]! - offset) << (bits * (o % per));
  return { qweight, qzeros };
}

function matrix(inDim: number, out: number, groups: number, bits: number, seed: number) {
  let s = seed;
  const next = () => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s;
  };
  const max = 2 ** bits;
  const q = Array.from({ length: inDim }, () => Array.from({ length: out }, () => next() % max));
  const z = Array.from({ length: groups }, () => Array.from({ length: out }, () => 1 + (next() % (max - 1))));
  const scales = Float32Array.from({ length: groups * out }, () => (1 + (next() % 100)) / 1024);
  return { q, z, scales };
}

/** (q - z) * s per input row's group, [out, in]. */
function expected(m: ReturnType<typeof matrix>, out: number, groupOf: (i: number) => number): Float32Array {
  const inDim = m.q.length;
  const w = new Float32Array(out * inDim);
  for (let o = 0; o < out; o++)
    for (let i = 0; i < inDim; i++) {
      const g = groupOf(i);
      w[o * inDim + i] = (m.q[i]![o]! - m.z[g]![o]!) * m.scales[g * out + o]!;
    }
  return w;
}

describe("repackPrequantized", () => {
  it("8-bit GPTQ v2 (zeros as stored), group size 32: each weight's (q - z) * s", () => {
    const f: PrequantizedFormat = { method: "gptq", bits: 8, groupSize: 32, zeroOffset: 0 };
    const m = matrix(64, 8, 2, 8, 7);
    const t: PackedTensors = { ...packGptq(m.q, m.z, 8, 0), scales: m.scales };
    const r = repackPrequantized("x", f, t, 8, 64);
    assert.equal(r.blockSize, 32);
    const got = dequantizeBlocks(r, { bits: 8, blockSize: 32, symmetric: false });
    assert.deepEqual(
      got,
      expected(m, 8, (i) => Math.floor(i / 32)),
    );
  });

  it("group size -1 (one group per row) runs as 128-wide blocks sharing the row's scale and zero", () => {
    const f: PrequantizedFormat = { method: "gptq", bits: 4, groupSize: -1, zeroOffset: 1 };
    const m = matrix(256, 16, 1, 4, 3);
    const t: PackedTensors = { ...packGptq(m.q, m.z, 4, 1), scales: m.scales };
    const r = repackPrequantized("x", f, t, 16, 256);
    assert.equal(r.blockSize, 128);
    assert.deepEqual(
      dequantizeBlocks(r, { bits: 4, blockSize: 128, symmetric: false }),
      expected(m, 16, () => 0),
    );
  });

  it("a row-parallel slice starting inside a group uses blocks of 16 with the group's scale", () => {
    const f: PrequantizedFormat = { method: "gptq", bits: 4, groupSize: 32, zeroOffset: 1 };
    const m = matrix(96, 8, 3, 4, 5);
    const t: PackedTensors = { ...packGptq(m.q, m.z, 4, 1), scales: m.scales };
    const r = repackPrequantized("x", f, t, 8, 96, { axis: 1, start: 48, end: 96 });
    assert.equal(r.blockSize, 16);
    const whole = expected(m, 8, (i) => Math.floor(i / 32));
    const want = Float32Array.from(
      { length: 8 * 48 },
      (_, k) => whole[Math.floor(k / 48) * 96 + 48 + (k % 48)]!,
    );
    assert.deepEqual(dequantizeBlocks(r, { bits: 4, blockSize: 16, symmetric: false }), want);
  });

  it("refuses a v1 zero point that overflowed (stored 15 = zero 16) and a g_idx with uneven groups", () => {
    const f: PrequantizedFormat = { method: "gptq", bits: 4, groupSize: 32, zeroOffset: 1 };
    const m = matrix(32, 8, 1, 4, 9);
    m.z[0]![3] = 16;
    const t: PackedTensors = { ...packGptq(m.q, m.z, 4, 1), scales: m.scales };
    assert.throws(() => repackPrequantized("layer.q_proj", f, t, 8, 32), /layer\.q_proj: zero point 16/);
    const uneven = Int32Array.from({ length: 64 }, (_, i) => (i < 20 || i >= 50 ? 0 : 1));
    const m2 = matrix(64, 8, 2, 4, 11);
    const t2: PackedTensors = { ...packGptq(m2.q, m2.z, 4, 1), scales: m2.scales, gIdx: uneven };
    assert.throws(
      () => repackPrequantized("x", f, t2, 8, 64),
      /g_idx does not give each group 32 input rows/,
    );
  });
});
