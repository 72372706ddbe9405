import assert from "node:assert/strict";
import { createLogger } from "../../../services/kernel/log.ts";
import { ManualClock } from "../../../services/kernel/manual-clock.ts";
import { apiErrors } from "../apiserver/core/api-status.ts";
import { ReconcileLoop, type ReconcileResult, splitKey } from "./reconcile-loop.ts";

function setup(reconcile: (key: string) => ReconcileResult | undefined) {
  const clock = new ManualClock();
  const loop = new ReconcileLoop("test", reconcile, { clock, log: createLogger("loop-spec", "silent") });
  return { clock, loop };
}

describe("reconcile-loop", () => {
  it("reconciles each queued key once per drain", async () => {
    const seen: string[] = [];
    const { loop } = setup((key) => {
      seen.push(key);
      return undefined;
    });
    loop.enqueue("ns/a");
    loop.enqueue("ns/a");
    loop.enqueue("ns/b");
    await loop.idle();
    assert.deepEqual(seen, ["ns/a", "ns/b"]);
  });

  it("runs a key again when it asks to, on the clock", async () => {
    let runs = 0;
    const { clock, loop } = setup(() => (++runs === 1 ? { requeueAfterMs: 5_000 } : undefined));
    loop.enqueue("ns/a");
    await loop.idle();
    await clock.advance(4_999);
    await loop.idle();
    assert.equal(runs, 1);
    await clock.advance(1);
    await loop.idle();
    assert.equal(runs, 2);
  });

  it("retries a conflict at once and other errors with back-off", async () => {
    let runs = 0;
    const { clock, loop } = setup(() => {
      runs++;
      if (runs === 1) throw apiErrors.conflict({ group: "", resource: "pods", name: "a" }, "stale");
      if (runs === 2) throw new Error("boom");
      return undefined;
    });
    loop.enqueue("ns/a");
    await loop.idle();
    await loop.idle();
    assert.equal(runs, 2);
    await clock.advance(100);
    await loop.idle();
    assert.equal(runs, 3);
  });

  it("splits keys", () => {
    assert.deepEqual(splitKey("ns/name"), { namespace: "ns", name: "name" });
    assert.deepEqual(splitKey("/node"), { namespace: "", name: "node" });
  });
});
