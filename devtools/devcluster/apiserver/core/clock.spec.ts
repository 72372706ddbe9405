import assert from "node:assert/strict";
import { ManualClock } from "./clock.ts";

describe("clock", () => {
  it("fires manual timers in order when advanced, and not once cancelled", () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push("b"));
    clock.setTimer(10, () => fired.push("a"));
    const cancel = clock.setTimer(15, () => fired.push("never"));
    cancel();
    clock.advance(25);
    assert.deepEqual(fired, ["a", "b"]);
    assert.equal(clock.now(), 25);
  });
});
