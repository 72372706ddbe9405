import assert from "node:assert/strict";
import { InFlight } from "./in-flight.ts";

function manualDeadline(): { deadline: Promise<void>; expire: () => void } {
  let expire = () => {};
  const deadline = new Promise<void>((resolve) => {
    expire = resolve;
  });
  return { deadline, expire };
}

describe("InFlight", () => {
  it("drains at once when no call is in flight, then refuses new calls", async () => {
    const inFlight = new InFlight();
    assert.deepEqual(await inFlight.drain(new Promise(() => {}), "stop"), { cancelled: 0 });
    assert.equal(inFlight.begin(), undefined);
    assert.equal(inFlight.draining, true);
  });

  it("waits for calls in flight to end before the deadline", async () => {
    const inFlight = new InFlight();
    const call = inFlight.begin()!;
    const { deadline } = manualDeadline();
    let drained = false;
    const drain = inFlight.drain(deadline, "stop").then((r) => {
      drained = true;
      return r;
    });
    await Promise.resolve();
    assert.equal(drained, false);
    assert.equal(inFlight.begin(), undefined, "new calls are refused while draining");
    inFlight.end(call);
    assert.deepEqual(await drain, { cancelled: 0 });
    assert.equal(call.signal.aborted, false);
  });

  it("aborts the calls still running when the deadline passes", async () => {
    const inFlight = new InFlight();
    const first = inFlight.begin()!;
    const second = inFlight.begin()!;
    first.signal.addEventListener("abort", () => inFlight.end(first));
    second.signal.addEventListener("abort", () => inFlight.end(second));
    const { deadline, expire } = manualDeadline();
    const drain = inFlight.drain(deadline, "drain timeout");
    expire();
    assert.deepEqual(await drain, { cancelled: 2 });
    assert.equal(first.signal.reason, "drain timeout");
    assert.equal(inFlight.size, 0);
  });
});
