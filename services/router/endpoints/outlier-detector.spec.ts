import assert from "node:assert/strict";
import { ManualClock } from "../../kernel/manual-clock.ts";
import { OutlierDetector } from "./outlier-detector.ts";

function detector(probeResults: boolean[], probe = async () => probeResults.shift() ?? true) {
  const clock = new ManualClock();
  const ejections: number[] = [];
  let readmissions = 0;
  const outliers = new OutlierDetector(
    { consecutiveFailures: 3, baseEjectionMs: 1_000, maxEjectionMs: 8_000 },
    clock,
    {
      probe,
      ejected: (ms) => ejections.push(ms),
      readmitted: () => readmissions++,
    },
  );
  return { clock, outliers, ejections, readmissions: () => readmissions };
}

/** Lets the probe's promise settle. */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("OutlierDetector", () => {
  it("ejects after consecutive failures only; a success in between resets the count", () => {
    const { outliers, ejections } = detector([]);
    outliers.recordFailure();
    outliers.recordFailure();
    outliers.recordSuccess();
    outliers.recordFailure();
    outliers.recordFailure();
    assert.equal(outliers.ejected, false);
    outliers.recordFailure();
    assert.equal(outliers.ejected, true);
    assert.deepEqual(ejections, [1_000]);
  });

  it("probes when the ejection time is up and readmits on a passing probe", async () => {
    let pass = () => {};
    const probe = () => new Promise<boolean>((resolve) => (pass = () => resolve(true)));
    const { clock, outliers, readmissions } = detector([], probe);
    for (let i = 0; i < 3; i++) outliers.recordFailure();
    await clock.advance(999);
    assert.equal(outliers.state, "ejected");
    await clock.advance(1);
    assert.equal(outliers.state, "probing");
    pass();
    await settle();
    assert.equal(outliers.state, "active");
    assert.equal(readmissions(), 1);
  });

  it("doubles the ejection time while probes fail, up to the maximum", async () => {
    const { clock, outliers, ejections } = detector([false, false, false, false, true]);
    for (let i = 0; i < 3; i++) outliers.recordFailure();
    for (const ms of [1_000, 2_000, 4_000, 8_000, 8_000]) {
      await clock.advance(ms);
      await settle();
    }
    assert.deepEqual(ejections, [1_000, 2_000, 4_000, 8_000, 8_000]);
    assert.equal(outliers.state, "active");
  });

  it("ejects again at the first failure on probation, for longer; a success ends the probation", async () => {
    const { clock, outliers, ejections } = detector([true, true]);
    for (let i = 0; i < 3; i++) outliers.recordFailure();
    await clock.advance(1_000);
    await settle();
    outliers.recordFailure();
    assert.deepEqual(ejections, [1_000, 2_000]);
    await clock.advance(2_000);
    await settle();
    outliers.recordSuccess();
    for (let i = 0; i < 3; i++) outliers.recordFailure();
    assert.deepEqual(ejections, [1_000, 2_000, 1_000], "back to the base time after a success");
  });
});
