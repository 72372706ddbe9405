import assert from "node:assert/strict";
import { clientLimitMs, goDurationMs } from "./client-limit.ts";

describe("clientLimitMs", () => {
  it("gives a client 90 s unless its own --timeout asks for longer", () => {
    assert.equal(clientLimitMs(["get", "pods"]), 90_000);
    assert.equal(clientLimitMs(["wait", "--for=condition=Ready", "pod/x", "--timeout=30s"]), 90_000);
  });

  it("lets a longer --timeout run out, with 30 s to spare, in either spelling", () => {
    assert.equal(clientLimitMs(["wait", "inferencemodel/m", "--timeout=240s"]), 270_000);
    assert.equal(clientLimitMs(["install", "x", "--wait", "--timeout", "5m0s"]), 330_000);
  });

  it("reads Go durations and refuses anything else", () => {
    assert.equal(goDurationMs("1h2m3s"), 3_723_000);
    assert.equal(goDurationMs("1.5m"), 90_000);
    assert.equal(goDurationMs("250ms"), 250);
    assert.equal(goDurationMs("240"), undefined);
    assert.equal(goDurationMs("soon"), undefined);
  });
});
