import assert from "node:assert/strict";
import { ManualClock } from "../../kernel/manual-clock.ts";
import { Ewma } from "./ewma.ts";

describe("Ewma", () => {
  it("starts at the first sample and moves towards new ones by the time elapsed", async () => {
    const clock = new ManualClock();
    const ewma = new Ewma(1_000, clock);
    assert.equal(ewma.value, undefined);
    ewma.record(10);
    assert.equal(ewma.value, 10);
    await clock.advance(1_000);
    ewma.record(20);
    assert.equal(ewma.value, 15, "a sample one half-life old weighs as much as the new one");
    await clock.advance(100_000);
    ewma.record(40);
    assert.ok(Math.abs(ewma.value! - 40) < 1e-6, "a very old average is forgotten");
  });

  it("still moves for samples recorded at the same instant", () => {
    const ewma = new Ewma(1_000, new ManualClock());
    ewma.record(0);
    ewma.record(100);
    assert.equal(ewma.value, 10);
  });
});
