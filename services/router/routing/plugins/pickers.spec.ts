import assert from "node:assert/strict";
import { candidate, pluginContext, request } from "../../testing/candidates.ts";
import { maxScorePicker, powerOfTwoPicker, randomPicker, roundRobinPicker } from "./pickers.ts";

const three = [candidate("c"), candidate("a"), candidate("b")];

describe("pickers", () => {
  it("max-score takes the best, ties going to the earliest candidate", () => {
    const picker = maxScorePicker.create({}, pluginContext());
    assert.equal(picker.pick(request, three, [0.2, 0.9, 0.1]), 1);
    assert.equal(picker.pick(request, three, [0.5, 0.5, 0.5]), 0);
  });

  it("round-robin cycles through the best candidates by name", () => {
    const picker = roundRobinPicker.create({}, pluginContext());
    const picks = Array.from({ length: 6 }, () => three[picker.pick(request, three, [0, 0, 0])]!.name);
    assert.deepEqual(picks, ["a", "b", "c", "a", "b", "c"]);
    assert.notEqual(three[picker.pick(request, three, [1, 0, 1])]!.name, "a", "only among the best");
  });

  it("random spreads picks over the best candidates", () => {
    const picker = randomPicker.create({}, pluginContext(3));
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) counts[picker.pick(request, three, [1, 1, 0])]!++;
    assert.equal(counts[2], 0);
    assert.ok(Math.abs(counts[0]! - counts[1]!) < 300, String(counts));
  });

  it("power-of-two compares two distinct candidates and never picks the worst of three", () => {
    const picker = powerOfTwoPicker.create({}, pluginContext(5));
    const counts = [0, 0, 0];
    for (let i = 0; i < 3_000; i++) counts[picker.pick(request, three, [0.9, 0.5, 0.1])]!++;
    assert.equal(counts[2], 0);
    assert.ok(counts[0]! > counts[1]!, String(counts));
    assert.equal(picker.pick(request, [candidate("only")], [0]), 0);
  });
});
