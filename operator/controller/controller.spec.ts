import assert from "node:assert/strict";
import { createLogger } from "../../services/kernel/log.ts";
import { ManualClock, settle } from "../../services/kernel/manual-clock.ts";
import { Metrics } from "../../services/kernel/telemetry/metrics.ts";
import { KubeApiError } from "../../services/kube/api-error.ts";
import { WorkQueue } from "../../services/kube/work-queue.ts";
import { Controller, type Reconcile } from "./controller.ts";
import { OperatorMetrics } from "./operator-metrics.ts";

describe("controller", () => {
  const setup = (reconcile: Reconcile) => {
    const clock = new ManualClock();
    const metrics = new OperatorMetrics(new Metrics().meter("spec"));
    const queue = new WorkQueue(clock);
    const controller = new Controller("models", queue, reconcile, {
      clock,
      log: createLogger("c", "silent"),
      metrics,
      workers: 2,
    });
    controller.start();
    return { clock, metrics, queue, controller };
  };

  it("retries failures with backoff, conflicts included, and forgets a key once it succeeds", async () => {
    const calls: string[] = [];
    let failures = 2;
    const { clock, metrics, queue, controller } = setup(async (key) => {
      calls.push(key);
      if (failures-- === 2) throw new Error("boom");
      if (failures === 0) throw new KubeApiError(409, "Conflict", "modified");
      return undefined;
    });
    queue.add("ns/a");
    await settle();
    assert.deepEqual(calls, ["ns/a"]);
    await clock.advance(100);
    assert.deepEqual(calls, ["ns/a", "ns/a"]);
    await clock.advance(200);
    assert.deepEqual(calls, ["ns/a", "ns/a", "ns/a"]);
    assert.equal(queue.failures("ns/a"), 0);
    assert.equal(metrics.reconciles("models"), 3);
    await clock.advance(60_000);
    assert.equal(calls.length, 3);
    await controller.stop();
  });

  it("requeues after the delay a reconcile asks for", async () => {
    let calls = 0;
    const { clock, controller, queue } = setup(async () => {
      calls++;
      return calls === 1 ? { requeueAfterMs: 5_000 } : undefined;
    });
    queue.add("ns/a");
    await settle();
    await clock.advance(4_999);
    assert.equal(calls, 1);
    await clock.advance(1);
    assert.equal(calls, 2);
    await controller.stop();
  });
});
