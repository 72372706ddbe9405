import assert from "node:assert/strict";
import { dequantizeChannels, quantizeChannels } from "./quantize-channels.ts";

describe("quantizeChannels (per-channel int8, MatMulInteger's B layout)", () => {
  const OUT = 5;
  const IN = 40;
  // Rows of very different ranges, one all zeros, one all positive (asymmetric's case).
  const w = new Float32Array(OUT * IN).map((_, i) => {
    const r = Math.floor(i / IN);
    const c = i % IN;
    if (r === 2) return 0;
    if (r === 3) return 0.5 + c / IN;
    return Math.sin(i * 1.7) * 10 ** (r - 2);
  });
  const rowMax = (r: number) => Math.max(...Array.from(w.subarray(r * IN, (r + 1) * IN), Math.abs));

  it("symmetric: each value within half a step of its row's scale, codes transposed to [in, out]", () => {
    const q = quantizeChannels(w, OUT, IN, { symmetric: true });
    assert.equal(q.codes.length, IN * OUT);
    assert.equal(q.zeroPoints, undefined);
    for (let r = 0; r < OUT; r++)
      assert.ok(Math.abs(q.scales[r]! / (rowMax(r) / 127) - 1) < 1e-6 || rowMax(r) === 0);
    // Row 0, column 1's code sits at [1, 0] of the transposed layout.
    assert.equal(q.codes[1 * OUT + 0], Math.round(w[1]! / q.scales[0]!));
    const back = dequantizeChannels(q);
    for (let i = 0; i < w.length; i++) {
      const step = q.scales[Math.floor(i / IN)]!;
      assert.ok(Math.abs(back[i]! - w[i]!) <= step / 2 + 1e-7, `[${i}] off by ${back[i]! - w[i]!}`);
    }
  });

  it("asymmetric: a zero point per row spends all 256 codes on [min, max]", () => {
    const q = quantizeChannels(w, OUT, IN, { symmetric: false });
    assert.ok(q.zeroPoints);
    // Row 3 is all positive: [0, max] takes 255 steps (symmetric would give it 127).
    const lo = Math.min(0, ...w.subarray(3 * IN, 4 * IN));
    assert.ok(Math.abs(q.scales[3]! / ((rowMax(3) - lo) / 255) - 1) < 1e-6);
    const back = dequantizeChannels(q);
    for (let i = 0; i < w.length; i++)
      assert.ok(Math.abs(back[i]! - w[i]!) <= q.scales[Math.floor(i / IN)]! / 2 + 1e-7, `[${i}]`);
    // The zero row stays exactly zero.
    for (let c = 0; c < IN; c++) assert.equal(back[2 * IN + c], 0);
  });
});
