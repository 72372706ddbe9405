import assert from "node:assert/strict";
import { fnv1a32, Rng } from "./prng.ts";

describe("prng", () => {
  it("hashes strings with FNV-1a", () => {
    assert.equal(fnv1a32(""), 0x811c9dc5);
    assert.equal(fnv1a32("a"), 0xe40c292c);
  });

  it("is deterministic per (seed, stream) and differs across seeds and streams", () => {
    const take = (r: Rng) => Array.from({ length: 8 }, () => r.nextU32());
    assert.deepEqual(take(new Rng(42, "x")), take(new Rng(42, "x")));
    assert.notDeepEqual(take(new Rng(42, "x")), take(new Rng(43, "x")));
    assert.notDeepEqual(take(new Rng(42, "x")), take(new Rng(42, "y")));
    assert.notDeepEqual(take(new Rng(1, "x")), take(new Rng(1 + 2 ** 32, "x")));
  });

  it("pins its output so that checkpoints stay byte-identical across versions", () => {
    const r = new Rng(0, "");
    assert.deepEqual(
      Array.from({ length: 4 }, () => r.nextU32()),
      PINNED,
    );
  });

  it("samples a bell shape with the requested mean and standard deviation", () => {
    const xs = new Rng(7, "normal").fillNormal(new Float32Array(200_000), 0.5);
    let sum = 0;
    let sq = 0;
    let within1 = 0;
    for (const x of xs) {
      sum += x;
      sq += x * x;
      if (Math.abs(x) < 0.5) within1++;
    }
    const mean = sum / xs.length;
    const sd = Math.sqrt(sq / xs.length - mean * mean);
    assert.ok(Math.abs(mean) < 0.005, `mean ${mean}`);
    assert.ok(Math.abs(sd - 0.5) < 0.005, `sd ${sd}`);
    // Irwin–Hall(4) puts 66.8 % of its mass within one σ (a normal: 68.3 %).
    assert.ok(Math.abs(within1 / xs.length - 0.668) < 0.006, `P(|x|<σ) ${within1 / xs.length}`);
    assert.ok(xs.every((x) => Math.abs(x) <= 0.5 * 3.4642));
  });

  it("fills normals from the same stream as nextU32", () => {
    const a = new Rng(5, "s");
    const b = new Rng(5, "s");
    a.fillNormal(new Float32Array(3), 1);
    for (let i = 0; i < 6; i++) b.nextU32();
    assert.equal(a.nextU32(), b.nextU32());
  });

  it("draws uniform floats in [0, 1)", () => {
    const r = new Rng(3);
    for (let i = 0; i < 10_000; i++) {
      const x = r.nextFloat();
      assert.ok(x >= 0 && x < 1);
    }
  });
});

const PINNED = [2776097538, 4161468943, 2338780610, 832859094];
