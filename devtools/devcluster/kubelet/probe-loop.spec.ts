import assert from "node:assert/strict";
import { ManualClock } from "../../../services/kernel/manual-clock.ts";
import type { Probe } from "../objects/pod-types.ts";
import type { ProbeOutcome } from "./probe-check.ts";
import { type ProbeKind, ProbeLoop } from "./probe-loop.ts";

/** A probe whose attempts return the scripted results; advancing the clock runs them. */
function scripted(kind: ProbeKind, probe: Probe, results: boolean[]) {
  const clock = new ManualClock();
  const changes: boolean[] = [];
  const failures: string[] = [];
  let attempts = 0;
  const loop = new ProbeLoop({
    kind,
    probe,
    clock,
    check: async (): Promise<ProbeOutcome> => {
      const ok = results[attempts++] ?? true;
      return { ok, message: ok ? "" : `failed #${attempts}` };
    },
    onChange: (ok) => changes.push(ok),
    onFailure: (outcome) => failures.push(outcome.message),
  });
  const step = async (ms: number) => {
    await clock.advance(ms);
    for (let i = 0; i < 5; i++) await new Promise((resolve) => setImmediate(resolve));
  };
  return { loop, changes, failures, step, attempts: () => attempts };
}

describe("probe-loop", () => {
  it("readiness starts failed and passes after successThreshold passes", async () => {
    const { loop, changes, step } = scripted("readiness", { periodSeconds: 1, successThreshold: 2 }, [
      true,
      true,
    ]);
    loop.start();
    assert.equal(loop.ok, false);
    await step(0);
    assert.equal(loop.ok, false);
    await step(1_000);
    assert.equal(loop.ok, true);
    assert.deepEqual(changes, [true]);
  });

  it("liveness starts passed and fails after failureThreshold consecutive failures", async () => {
    const { loop, changes, failures, step } = scripted(
      "liveness",
      { periodSeconds: 2, failureThreshold: 2 },
      [false, true, false, false],
    );
    loop.start();
    assert.equal(loop.ok, true);
    for (const ms of [0, 2_000, 2_000]) await step(ms);
    assert.equal(loop.ok, true);
    await step(2_000);
    assert.equal(loop.ok, false);
    assert.deepEqual(changes, [false]);
    assert.deepEqual(failures, ["failed #1", "failed #3", "failed #4"]);
  });

  it("waits initialDelaySeconds before the first attempt and stops when told", async () => {
    const { loop, step, attempts } = scripted("readiness", { initialDelaySeconds: 5, periodSeconds: 1 }, []);
    loop.start();
    await step(4_000);
    assert.equal(attempts(), 0);
    await step(1_000);
    assert.equal(attempts(), 1);
    loop.stop();
    await step(10_000);
    assert.equal(attempts(), 1);
  });

  it("startup fails after failureThreshold failures", async () => {
    const { loop, changes, step } = scripted("startup", { periodSeconds: 1, failureThreshold: 2 }, [
      false,
      false,
    ]);
    loop.start();
    await step(0);
    await step(1_000);
    assert.deepEqual(changes, [false]);
  });
});
