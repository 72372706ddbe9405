import assert from "node:assert/strict";
import { ManualClock } from "../kernel/manual-clock.ts";
import { WorkQueue } from "./work-queue.ts";

describe("work queue", () => {
  let clock: ManualClock;
  let queue: WorkQueue;
  beforeEach(() => {
    clock = new ManualClock();
    queue = new WorkQueue(clock);
  });

  it("keeps one entry per key, in order of first add", async () => {
    for (const key of ["a", "b", "a", "c", "b"]) queue.add(key);
    assert.equal(queue.length, 3);
    assert.deepEqual([await queue.get(), await queue.get(), await queue.get()], ["a", "b", "c"]);
  });

  it("does not hand a key being processed to another worker; re-queues it when added meanwhile", async () => {
    queue.add("a");
    const key = await queue.get();
    queue.add("a");
    queue.add("a");
    assert.equal(queue.length, 0);
    let second: string | undefined;
    void queue.get().then((k) => {
      second = k;
    });
    await clock.advance(0);
    assert.equal(second, undefined);
    queue.done(key!);
    await clock.advance(0);
    assert.equal(second, "a");
  });

  it("hands a key to a waiting worker at once", async () => {
    const waiting = queue.get();
    queue.add("x");
    assert.equal(await waiting, "x");
  });

  it("delays failed keys exponentially per key and forgets on success", async () => {
    const delaysOf = async (n: number) => {
      const delays: number[] = [];
      for (let i = 0; i < n; i++) {
        const start = clock.now();
        queue.addRateLimited("k");
        let got: string | undefined;
        void queue.get().then((k) => {
          got = k;
        });
        while (got === undefined) await clock.advance(50);
        assert.equal(got, "k");
        queue.done("k");
        delays.push(clock.now() - start);
      }
      return delays;
    };
    assert.deepEqual(await delaysOf(4), [100, 200, 400, 800]);
    queue.forget("k");
    assert.deepEqual(await delaysOf(1), [100]);
  });

  it("keeps the earliest of several delayed adds", async () => {
    queue.addAfter("k", 5_000);
    queue.addAfter("k", 1_000);
    queue.addAfter("k", 3_000);
    await clock.advance(1_000);
    assert.equal(queue.length, 1);
    await queue.get();
    queue.done("k");
    await clock.advance(10_000);
    assert.equal(queue.length, 0);
  });

  it("releases waiting workers on shutdown", async () => {
    const waiting = queue.get();
    queue.shutdown();
    assert.equal(await waiting, undefined);
    queue.add("late");
    assert.equal(queue.length, 0);
  });
});
