import assert from "node:assert/strict";
import { sleep } from "./clock.ts";
import { ManualClock } from "./manual-clock.ts";

describe("manual clock", () => {
  it("fires timers in order when advanced, and not once cancelled", async () => {
    const clock = new ManualClock(0);
    const fired: string[] = [];
    clock.setTimer(20, () => fired.push("b"));
    clock.setTimer(10, () => fired.push("a"));
    const cancel = clock.setTimer(15, () => fired.push("never"));
    cancel();
    assert.equal(clock.pending, 2);
    await clock.advance(25);
    assert.deepEqual(fired, ["a", "b"]);
    assert.equal(clock.now(), 25);
    assert.equal(clock.pending, 0);
  });

  it("runs timers set by timers when they fall due in the same advance, each at its own time", async () => {
    const clock = new ManualClock(0);
    const seen: number[] = [];
    const tick = () => {
      seen.push(clock.now());
      clock.setTimer(10, tick);
    };
    clock.setTimer(10, tick);
    await clock.advance(35);
    assert.deepEqual(seen, [10, 20, 30]);
    assert.equal(clock.now(), 35);
    assert.equal(clock.pending, 1);
  });

  it("lets code that sleeps in a loop make progress", async () => {
    const clock = new ManualClock(0);
    const woke: number[] = [];
    void (async () => {
      for (let i = 0; i < 3; i++) {
        await sleep(clock, 100);
        woke.push(clock.now());
      }
    })();
    await clock.advance(250);
    assert.deepEqual(woke, [100, 200]);
    await clock.advance(50);
    assert.deepEqual(woke, [100, 200, 300]);
  });

  it("ends a sleep at once when its signal aborts", async () => {
    const clock = new ManualClock(0);
    const abort = new AbortController();
    const slept = sleep(clock, 60_000, abort.signal);
    abort.abort();
    await slept;
    assert.equal(clock.pending, 0);
  });
});
