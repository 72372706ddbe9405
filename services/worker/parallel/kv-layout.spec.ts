// Whole KV blocks split into what each member of a group holds and joined back, with a member's part
// where a single process keeps it; a group of one passes its blocks through untouched.
import assert from "node:assert/strict";
import { joinKvParts, type KvPart, splitKvParts } from "./kv-layout.ts";

describe("sharded KV block layout", () => {
  const dims = { numLayers: 4, kvHeads: 2, headDim: 3, blockSize: 2 };
  // TP=2 x PP=2: stage s holds layers [2s, 2s+2), rank r holds KV head r.
  const parts: KvPart[] = [0, 1].flatMap((s) =>
    [0, 1].map((r) => ({ layers: { start: 2 * s, end: 2 * s + 2 }, heads: { start: r, end: r + 1 } })),
  );

  it("splits whole blocks into the members' parts and joins them back unchanged", () => {
    const whole = Float32Array.from({ length: 3 * 4 * 2 * 2 * 2 * 3 }, (_, i) => i);
    const split = splitKvParts(dims, 3, whole, parts);
    assert.deepEqual(
      split.map((p) => p.length),
      [72, 72, 72, 72],
    );
    assert.deepEqual(
      joinKvParts(
        dims,
        3,
        parts.map((part, i) => ({ part, data: split[i]! })),
      ),
      whole,
    );
  });

  it("puts a member's head of a layer where a single process keeps it", () => {
    const whole = Float32Array.from({ length: 4 * 2 * 2 * 2 * 3 }, (_, i) => i);
    const rank1Stage1 = splitKvParts(dims, 1, whole, [parts[3]!])[0]!;
    // block 0, layer 2, key, token 0, head 1: offset ((2*2+0)*2+0)*6 + 3
    assert.deepEqual([...rank1Stage1.subarray(0, 3)], [51, 52, 53]);
  });

  it("passes the whole blocks of a group of one (a single process) as they are, without a copy", () => {
    const whole = Float32Array.from({ length: 2 * 4 * 2 * 2 * 2 * 3 }, (_, i) => i);
    const all: KvPart = { layers: { start: 0, end: 4 }, heads: { start: 0, end: 2 } };
    assert.equal(splitKvParts(dims, 2, whole, [all])[0], whole);
    assert.equal(joinKvParts(dims, 2, [{ part: all, data: whole }]), whole);
    assert.throws(() => joinKvParts(dims, 1, [{ part: all, data: whole }]), /expected 96/);
  });

  it("rejects a part of the wrong size", () => {
    assert.throws(
      () => joinKvParts(dims, 1, [{ part: parts[0]!, data: new Float32Array(5) }]),
      /expected 24/,
    );
  });
});
