import assert from "node:assert/strict";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { AdmissionQueue } from "./admission-queue.ts";

describe("AdmissionQueue", () => {
  const never = new AbortController().signal;

  it("runs up to capacity, queues up to maxQueue in order, and refuses the rest with a retry hint", async () => {
    const queue = new AdmissionQueue({ capacity: () => 1, maxQueue: 2, retryAfterMs: 250 });
    const first = await queue.acquire(never);
    const order: string[] = [];
    const admitted = (name: string) => (release: () => void) => {
      order.push(name);
      return release;
    };
    const second = queue.acquire(never).then(admitted("second"));
    const third = queue.acquire(never).then(admitted("third"));
    assert.equal(queue.queued, 2);
    await assert.rejects(queue.acquire(never), (err: TesseraError) => {
      assert.equal(err.code, Code.RESOURCE_EXHAUSTED);
      assert.equal(err.retryAfterMs, 250);
      return true;
    });
    first();
    (await second)();
    (await third)();
    assert.deepEqual(order, ["second", "third"]);
    assert.equal(queue.running, 0);
  });

  it("admits a waiting interactive request before batch lines that queued earlier", async () => {
    const queue = new AdmissionQueue({ capacity: () => 1, maxQueue: 5, retryAfterMs: 1 });
    const first = await queue.acquire(never);
    const order: string[] = [];
    const admitted = (name: string) => (release: () => void) => {
      order.push(name);
      release();
    };
    const waiting = [
      queue.acquire(never, 10).then(admitted("batch-1")),
      queue.acquire(never, 10).then(admitted("batch-2")),
      queue.acquire(never).then(admitted("interactive")),
    ];
    first();
    await Promise.all(waiting);
    assert.deepEqual(order, ["interactive", "batch-1", "batch-2"]);
  });

  it("drops a waiter whose caller gives up", async () => {
    const queue = new AdmissionQueue({ capacity: () => 1, maxQueue: 5, retryAfterMs: 1 });
    const release = await queue.acquire(never);
    const controller = new AbortController();
    const waiting = queue.acquire(controller.signal);
    controller.abort(new TesseraError(Code.CANCELLED, "gone"));
    await assert.rejects(waiting, /gone/);
    assert.equal(queue.queued, 0);
    release();
    release();
    assert.equal(queue.running, 0, "releasing twice counts once");
  });

  it("admits waiters when capacity grows", async () => {
    let capacity = 0;
    const queue = new AdmissionQueue({ capacity: () => capacity, maxQueue: 5, retryAfterMs: 1 });
    const waiting = queue.acquire(never);
    capacity = 1;
    queue.wake();
    (await waiting)();
  });
});
