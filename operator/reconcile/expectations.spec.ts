import assert from "node:assert/strict";
import { ManualClock } from "../../services/kernel/manual-clock.ts";
import type { ObservedPod } from "../placement/pod-state.ts";
import { Expectations } from "./expectations.ts";

const pod = (name: string, extra: Partial<ObservedPod> = {}): ObservedPod => ({
  name,
  role: "both",
  replica: 0,
  stage: 0,
  rank: 0,
  revision: "r1",
  groupSize: 1,
  ready: true,
  failed: false,
  restarted: false,
  terminating: false,
  ...extra,
});

describe("expectations", () => {
  it("shows created pods until the cache has them, and deleted ones as terminating until it drops them", () => {
    const clock = new ManualClock();
    const e = new Expectations(clock);
    e.created("ns/m", [pod("new", { ready: false })]);
    e.deleted("ns/m", [pod("old")]);
    const stale = e.adjust("ns/m", [pod("old")]);
    assert.deepEqual(
      stale.map((p) => [p.name, p.terminating, p.ready]),
      [
        ["old", true, false],
        ["new", false, false],
      ],
    );
    const caughtUp = e.adjust("ns/m", [pod("new", { ready: true })]);
    assert.deepEqual(
      caughtUp.map((p) => [p.name, p.ready]),
      [["new", true]],
    );
    assert.deepEqual(
      e.adjust("ns/m", [pod("old")]).map((p) => p.terminating),
      [false],
      "confirmed expectations are gone",
    );
  });

  it("lets an expectation the cache never confirms lapse", async () => {
    const clock = new ManualClock();
    const e = new Expectations(clock, 1_000);
    e.created("ns/m", [pod("lost")]);
    assert.equal(e.adjust("ns/m", []).length, 1);
    await clock.advance(1_000);
    assert.equal(e.adjust("ns/m", []).length, 0);
  });
});
