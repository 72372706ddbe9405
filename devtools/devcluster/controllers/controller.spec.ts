import assert from "node:assert/strict";
import { createLogger } from "../../../services/kernel/log.ts";
import { ManualClock } from "../../../services/kernel/manual-clock.ts";
import { apiErrors } from "../apiserver/core/api-status.ts";
import { controllerLoop } from "./controller.ts";

describe("controller loop", () => {
  it("retries a conflict at once and other errors after 100 ms doubling to 10 s", async () => {
    const clock = new ManualClock();
    let runs = 0;
    const loop = controllerLoop(
      "test",
      () => {
        runs++;
        if (runs === 1) throw apiErrors.conflict({ group: "", resource: "pods", name: "a" }, "stale");
        throw new Error("boom");
      },
      { clock, log: createLogger("loop-spec", "silent") },
    );
    loop.queue.add("ns/a");
    await loop.idle();
    assert.equal(runs, 2);
    await clock.advance(100);
    await loop.idle();
    assert.equal(runs, 3);
    for (const ms of [200, 400, 800, 1_600, 3_200, 6_400, 10_000, 10_000]) {
      await clock.advance(ms - 1);
      assert.equal(loop.busy, false);
      const before: number = runs;
      await clock.advance(1);
      await loop.idle();
      assert.equal(runs, before + 1, `retried after ${ms} ms`);
    }
    await loop.stop();
  });
});
