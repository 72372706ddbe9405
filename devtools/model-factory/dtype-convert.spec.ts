import assert from "node:assert/strict";
import {
  f32ArrayToBf16,
  f32ArrayToF16,
  f32BitsToBf16Bits,
  f32BitsToF16Bits,
  f32FromBits,
  toBf16Bits,
  toF16Bits,
} from "./dtype-convert.ts";

const hex = (n: number) => `0x${n.toString(16).padStart(4, "0")}`;
const show = (x: number) => (Object.is(x, -0) ? "-0" : String(x));

function halfValue(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * frac * 2 ** -24;
  if (exp === 31) return frac === 0 ? sign * Number.POSITIVE_INFINITY : Number.NaN;
  return sign * (1 + frac / 1024) * 2 ** (exp - 15);
}

describe("dtype-convert", () => {
  describe("float16", () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3c00],
      [-2, 0xc000],
      [0.5, 0x3800],
      [0.1, 0x2e66],
      [1 / 3, 0x3555],
      [Math.PI, 0x4248],
      [65504, 0x7bff], // largest half
      [65519, 0x7bff], // just below the midpoint to inf
      [65520, 0x7c00], // the midpoint rounds (to even) to inf
      [1e5, 0x7c00],
      [-1e9, 0xfc00],
      [Number.POSITIVE_INFINITY, 0x7c00],
      [Number.NEGATIVE_INFINITY, 0xfc00],
      [2 ** -14, 0x0400], // smallest normal
      [2 ** -24, 0x0001], // smallest subnormal
      [2 ** -25, 0x0000], // half of it: tie to even → 0
      [-(2 ** -25), 0x8000],
      [3 * 2 ** -26, 0x0001], // 0.75 of the smallest subnormal
      [2 ** -25 * 1.0001, 0x0001], // just above half
      [3 * 2 ** -25, 0x0002], // 1.5 → 2 (even)
      [5 * 2 ** -25, 0x0002], // 2.5 → 2 (even)
      [1023 * 2 ** -24, 0x03ff], // largest subnormal
      [1023.5 * 2 ** -24, 0x0400], // rounds up into the smallest normal
      [1 + 2 ** -11, 0x3c00], // tie → even
      [1 + 3 * 2 ** -11, 0x3c02], // tie → even (up)
      [1 + 2 ** -11 + 2 ** -20, 0x3c01], // above the tie
      [2 - 2 ** -11, 0x4000], // a tie whose rounding carries into the exponent
      [1e-10, 0x0000],
    ];
    for (const [x, bits] of cases) {
      it(`${show(x)} → ${hex(bits)}`, () => assert.equal(hex(toF16Bits(x)), hex(bits)));
    }

    it("keeps NaN a quiet NaN", () => {
      assert.equal(toF16Bits(Number.NaN) & 0x7e00, 0x7e00);
      assert.equal(f32BitsToF16Bits(0xff800001) & 0xfe00, 0xfe00); // signalling, negative
    });

    it("agrees with Math.f16round on every half midpoint and on random float32 bit patterns", function () {
      const f16round = (Math as unknown as { f16round?: (x: number) => number }).f16round;
      if (f16round === undefined) this.skip();
      const check = (bits: number) => {
        const x = f32FromBits(bits);
        if (Number.isNaN(x)) return;
        const got = halfValue(f32BitsToF16Bits(bits));
        const want = f16round(x);
        if (!Object.is(got, want)) assert.fail(`bits ${bits.toString(16)} (${x}): got ${got}, want ${want}`);
      };
      for (let h = 0; h < 0x7c00; h++) {
        const mid = (halfValue(h) + halfValue(h + 1)) / 2; // exact in float32
        const midBits = new Uint32Array(new Float32Array([mid]).buffer)[0]!;
        for (const d of [-1, 0, 1]) {
          check(midBits + d);
          check((midBits + d) | 0x80000000);
        }
      }
      let s = 12345;
      for (let i = 0; i < 200_000; i++) {
        s = (Math.imul(s, 1103515245) + 12345) >>> 0;
        check((s ^ (s << 13)) >>> 0);
      }
    });

    it("converts whole arrays", () => {
      const out = f32ArrayToF16(new Float32Array([1, -2, 65520]));
      assert.deepEqual([...out], [0x3c00, 0xc000, 0x7c00]);
    });
  });

  describe("bfloat16", () => {
    const cases: [number, number][] = [
      [0, 0x0000],
      [-0, 0x8000],
      [1, 0x3f80],
      [-2, 0xc000],
      [0.1, 0x3dcd],
      [Math.PI, 0x4049],
      [1 + 2 ** -8, 0x3f80], // tie → even (down)
      [1 + 3 * 2 ** -8, 0x3f82], // tie → even (up)
      [1 + 2 ** -8 + 2 ** -20, 0x3f81], // above the tie
      [3.3895313892515355e38, 0x7f7f], // largest bfloat16
      [3.4028234663852886e38, 0x7f80], // largest float32 rounds to inf
      [Number.NEGATIVE_INFINITY, 0xff80],
    ];
    for (const [x, bits] of cases) {
      it(`${show(x)} → ${hex(bits)}`, () => assert.equal(hex(toBf16Bits(x)), hex(bits)));
    }

    it("rounds float32 subnormals to nearest even and keeps NaN quiet", () => {
      assert.equal(f32BitsToBf16Bits(0x00000001), 0x0000);
      assert.equal(f32BitsToBf16Bits(0x00008000), 0x0000);
      assert.equal(f32BitsToBf16Bits(0x00018000), 0x0002);
      assert.equal(f32BitsToBf16Bits(0x7f800001), 0x7fc0);
      assert.equal(f32BitsToBf16Bits(0xffc00000), 0xffc0);
    });

    it("converts whole arrays", () => {
      const out = f32ArrayToBf16(new Float32Array([1, Math.PI, -0]));
      assert.deepEqual([...out], [0x3f80, 0x4049, 0x8000]);
    });
  });
});
