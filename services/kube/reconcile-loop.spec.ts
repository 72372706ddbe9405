import assert from "node:assert/strict";
import { createLogger } from "../kernel/log.ts";
import { ManualClock, settle } from "../kernel/manual-clock.ts";
import { KubeApiError } from "./api-error.ts";
import {
  type Reconcile,
  ReconcileLoop,
  type ReconcileLoopOptions,
  type ReconcileObserver,
  type ReconcileResult,
} from "./reconcile-loop.ts";

/** An observer that counts reconciles by result, as the operator's metrics do. */
function countingObserver() {
  const results: ReconcileResult[] = [];
  let depth: () => number = () => -1;
  const observer: ReconcileObserver = {
    watchQueue: (_loop, read) => {
      depth = read;
    },
    reconciled: (_loop, result) => results.push(result),
  };
  return { observer, results, depth: () => depth() };
}

function setup(reconcile: Reconcile, options: Partial<ReconcileLoopOptions> = {}) {
  const clock = new ManualClock();
  const counted = countingObserver();
  const loop = new ReconcileLoop("models", reconcile, {
    clock,
    log: createLogger("loop-spec", "silent"),
    observer: counted.observer,
    ...options,
  });
  loop.start();
  return { clock, loop, queue: loop.queue, ...counted };
}

describe("reconcile loop", () => {
  it("reconciles each queued key once, however often it was queued", async () => {
    const seen: string[] = [];
    const { loop, queue } = setup((key) => {
      seen.push(key);
      return undefined;
    });
    queue.add("ns/a");
    queue.add("ns/a");
    queue.add("ns/b");
    await loop.idle();
    assert.deepEqual(seen, ["ns/a", "ns/b"]);
  });

  it("reconciles off the caller's stack, and idle() waits for the keys reconciles queue", async () => {
    const seen: string[] = [];
    const { loop, queue } = setup((key) => {
      seen.push(key);
      if (key === "1") queue.add("2");
      return undefined;
    });
    queue.add("1");
    queue.add("1");
    assert.deepEqual(seen, []);
    assert.ok(loop.busy);
    await loop.idle();
    await loop.idle();
    assert.deepEqual(seen, ["1", "2"]);
    assert.ok(!loop.busy);
  });

  it("retries failures with backoff, conflicts included, and forgets a key once it succeeds", async () => {
    const calls: string[] = [];
    let failures = 2;
    const { clock, loop, queue, results } = setup(
      async (key) => {
        calls.push(key);
        if (failures-- === 2) throw new Error("boom");
        if (failures === 0) throw new KubeApiError(409, "Conflict", "modified");
        return undefined;
      },
      { workers: 2 },
    );
    queue.add("ns/a");
    await settle();
    assert.deepEqual(calls, ["ns/a"]);
    await clock.advance(100);
    assert.deepEqual(calls, ["ns/a", "ns/a"]);
    await clock.advance(200);
    assert.deepEqual(calls, ["ns/a", "ns/a", "ns/a"]);
    assert.equal(queue.failures("ns/a"), 0);
    assert.deepEqual(results, ["error", "conflict", "success"]);
    await clock.advance(60_000);
    assert.equal(calls.length, 3);
    await loop.stop();
  });

  it("retries a conflict at once when told to, and other errors with back-off", async () => {
    let runs = 0;
    const { clock, loop, queue } = setup(
      () => {
        runs++;
        if (runs === 1) throw new KubeApiError(409, "Conflict", "stale");
        if (runs === 2) throw new Error("boom");
        return undefined;
      },
      { conflicts: "at-once" },
    );
    queue.add("ns/a");
    await loop.idle();
    assert.equal(runs, 2);
    await clock.advance(99);
    assert.equal(runs, 2);
    await clock.advance(1);
    await loop.idle();
    assert.equal(runs, 3);
  });

  it("requeues after the delay a reconcile asks for", async () => {
    let calls = 0;
    const { clock, loop, queue } = setup(async () => {
      calls++;
      return calls === 1 ? { requeueAfterMs: 5_000 } : undefined;
    });
    queue.add("ns/a");
    await settle();
    await clock.advance(4_999);
    assert.equal(calls, 1);
    await clock.advance(1);
    assert.equal(calls, 2);
    await loop.stop();
  });

  it("reports its queue depth to the observer", async () => {
    const { loop, queue, depth } = setup(() => undefined, { workers: 0 });
    queue.add("ns/a");
    queue.add("ns/b");
    assert.equal(depth(), 2);
    await loop.stop();
  });

  it("reconciles nothing more once stopped, and waits for the reconcile in flight", async () => {
    const seen: string[] = [];
    let finish = () => {};
    const { loop, queue } = setup(async (key) => {
      seen.push(key);
      if (key === "ns/a") await new Promise<void>((resolve) => (finish = resolve));
      return undefined;
    });
    queue.add("ns/a");
    queue.add("ns/b");
    await settle();
    let stopped = false;
    const stopping = loop.stop().then(() => (stopped = true));
    await settle();
    assert.equal(stopped, false);
    finish();
    await stopping;
    assert.deepEqual(seen, ["ns/a"]);
    queue.add("ns/c");
    assert.equal(queue.length, 0);
  });
});
