import assert from "node:assert/strict";
import { WorkQueue } from "./work-queue.ts";

describe("work-queue", () => {
  it("deduplicates keys, runs off the call stack and reports idle", async () => {
    const seen: number[] = [];
    const queue = new WorkQueue<number>((n) => {
      seen.push(n);
      if (n === 1) queue.add("2", 2);
    });
    queue.add("1", 0);
    queue.add("1", 1);
    assert.deepEqual(seen, []);
    assert.ok(queue.busy);
    await queue.idle();
    await queue.idle();
    assert.deepEqual(seen, [1, 2]);
  });
});
