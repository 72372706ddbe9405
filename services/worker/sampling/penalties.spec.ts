import assert from "node:assert/strict";
import { TesseraError } from "../../kernel/errors.ts";
import { hasPenalties, type Penalties, PenaltyScratch, TokenHistory } from "./penalties.ts";

function history(prompt: number[], output: number[]): TokenHistory {
  const h = new TokenHistory(prompt);
  for (const id of output) h.append(id);
  return h;
}

/** The penalized logits as a full vector, untouched ids copied from `logits`. */
function penalize(logits: Float32Array, h: TokenHistory, p: Penalties): number[] {
  const scratch = new PenaltyScratch();
  const n = h.collect(logits, p, scratch);
  const out = Array.from(logits);
  for (let i = 0; i < n; i++) {
    assert.equal(scratch.raw[i], logits[scratch.ids[i]!], "raw values are the logits");
    out[scratch.ids[i]!] = scratch.penalized[i]!;
  }
  return out;
}

const OFF: Penalties = { repetition: 1, presence: 0, frequency: 0 };

describe("TokenHistory", () => {
  it("keeps the distinct prompt ids and the output counts", () => {
    const h = history([5, 1, 5, 2], [7, 1, 7, 7]);
    assert.equal(h.promptDistinct, 3);
    assert.equal(h.outputLength, 4);
    assert.deepEqual(
      [1, 2, 5, 7, 9].map((id) => h.inPrompt(id)),
      [true, true, true, false, false],
    );
    assert.deepEqual(
      [1, 2, 5, 7, 9].map((id) => h.count(id)),
      [1, 0, 0, 3, 0],
    );
  });

  it("rejects ids that are not token ids", () => {
    assert.throws(() => new TokenHistory([1, -1]), TesseraError);
    assert.throws(() => new TokenHistory([1.5]), TesseraError);
    assert.throws(() => new TokenHistory([]).append(Number.NaN), TesseraError);
  });
});

describe("penalties", () => {
  const logits = new Float32Array([2, -1, 0.5, 3, -2, 1]);
  // prompt: 0, 1 (twice); output: 3 (twice), 4 (once); 2 and 5 never seen.
  const h = history([0, 1, 1], [3, 4, 3]);

  it("knows when any penalty is on", () => {
    assert.equal(hasPenalties(OFF), false);
    assert.equal(hasPenalties({ ...OFF, repetition: 1.1 }), true);
    assert.equal(hasPenalties({ ...OFF, presence: -0.1 }), true);
    assert.equal(hasPenalties({ ...OFF, frequency: 0.1 }), true);
  });

  it("repetition: divides positive and multiplies non-positive logits of prompt and output ids", () => {
    const got = penalize(logits, h, { ...OFF, repetition: 2 });
    assert.deepEqual(got, [1, -2, 0.5, 1.5, -4, 1]);
    // Below 1 it rewards repetition.
    assert.deepEqual(penalize(logits, h, { ...OFF, repetition: 0.5 }), [4, -0.5, 0.5, 6, -1, 1]);
  });

  it("presence: subtracts once from every generated id, never from prompt-only ids", () => {
    assert.deepEqual(penalize(logits, h, { ...OFF, presence: 0.5 }), [2, -1, 0.5, 2.5, -2.5, 1]);
    assert.deepEqual(penalize(logits, h, { ...OFF, presence: -1 }), [2, -1, 0.5, 4, -1, 1]);
  });

  it("frequency: subtracts once per generation", () => {
    assert.deepEqual(penalize(logits, h, { ...OFF, frequency: 0.25 }), [2, -1, 0.5, 2.5, -2.25, 1]);
  });

  it("applies repetition first, then frequency and presence", () => {
    const got = penalize(logits, h, { repetition: 2, presence: 0.25, frequency: 0.5 });
    // 3: 3 / 2 - 0.5 * 2 - 0.25; 4: -2 * 2 - 0.5 - 0.25
    assert.deepEqual(got, [1, -2, 0.5, 0.25, -4.75, 1]);
  });

  it("touches only the generated ids when repetition is off, and none before any output", () => {
    const scratch = new PenaltyScratch();
    assert.equal(h.collect(logits, { ...OFF, presence: 1 }, scratch), 2);
    assert.deepEqual(Array.from(scratch.ids.subarray(0, 2)), [3, 4]);
    assert.equal(h.collect(logits, { ...OFF, repetition: 1.2 }, scratch), 4);
    assert.equal(new TokenHistory([0, 1]).collect(logits, { ...OFF, frequency: 1 }, scratch), 0);
  });

  it("keeps -Infinity and clamps overflow to the finite float32 range", () => {
    const wide = new Float32Array([Number.NEGATIVE_INFINITY, 3e38, -3e38, 1]);
    const seen = history([0, 1, 2], [0]);
    const up = penalize(wide, seen, { repetition: 1e-3, presence: 2, frequency: 2 });
    assert.deepEqual(up, [Number.NEGATIVE_INFINITY, 3.4028234663852886e38, Math.fround(-3e35), 1]);
    const down = penalize(wide, seen, { repetition: 1e3, presence: -2, frequency: -2 });
    assert.deepEqual(down, [Number.NEGATIVE_INFINITY, Math.fround(3e35), -3.4028234663852886e38, 1]);
  });

  it("rejects a history id outside the logits", () => {
    assert.throws(
      () => history([10], []).collect(logits, { ...OFF, repetition: 2 }, new PenaltyScratch()),
      /outside/,
    );
  });

  it("grows its scratch for long histories", () => {
    const prompt = Array.from({ length: 5000 }, (_, i) => (i * 7) % 3000);
    const big = new Float32Array(3000).fill(1);
    const scratch = new PenaltyScratch();
    assert.equal(history(prompt, [1, 2]).collect(big, { ...OFF, repetition: 2 }, scratch), 3000);
    assert.ok(scratch.ids.length >= 3000);
  });
});
