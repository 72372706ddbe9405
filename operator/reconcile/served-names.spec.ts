import assert from "node:assert/strict";
import type { ObservedPod } from "../placement/pod-state.ts";
import { ServedNames } from "./served-names.ts";
import type { WorkerPodRef } from "./worker-models.ts";

const pod = (name: string, state: Partial<ObservedPod> = {}): ObservedPod => ({
  name,
  role: "both",
  replica: 0,
  stage: 0,
  rank: 0,
  revision: "r1",
  groupSize: 1,
  podIP: "127.0.1.1",
  ready: true,
  failed: false,
  restarted: false,
  terminating: false,
  ...state,
});

const withoutAddress = ({ podIP: _ip, ...rest }: ObservedPod): ObservedPod => rest;

describe("asking the workers which model they serve", () => {
  /** Answers `names`, or fails while `down`; records every endpoint asked. */
  const workers = () => {
    const asked: string[] = [];
    const w = {
      asked,
      down: false,
      names: ["q2"],
      servedNames: async (ref: WorkerPodRef) => {
        asked.push(`${ref.namespace}/${ref.name} ${ref.endpoint}`);
        if (w.down) throw new Error("14 UNAVAILABLE: No connection established");
        return w.names;
      },
    };
    return w;
  };

  it("asks each ready entry pod once, on its pod IP, and keeps the answer while the pod keeps its IP", async () => {
    const w = workers();
    const names = new ServedNames(w);
    const pods = [
      pod("a"),
      pod("a-s1", { stage: 1, podIP: "127.0.1.2" }),
      pod("b", { replica: 1, ready: false, podIP: "127.0.1.3" }),
      withoutAddress(pod("c", { replica: 2 })),
    ];
    const first = await names.observe("ml/q2", "ml", pods);
    assert.deepEqual([...first], [["a", { names: ["q2"] }]]);
    assert.deepEqual(w.asked, ["ml/a 127.0.1.1:50051"], "only the ready entry pod with an address");
    w.names = ["other"];
    assert.deepEqual([...(await names.observe("ml/q2", "ml", pods))], [["a", { names: ["q2"] }]]);
    assert.equal(w.asked.length, 1, "not asked again");
    const moved = await names.observe("ml/q2", "ml", [pod("a", { podIP: "127.0.1.9" })]);
    assert.deepEqual([...moved], [["a", { names: ["other"] }]], "a new IP is a new process: asked again");
  });

  it("asks again, on the next reconcile, a worker that could not be asked", async () => {
    const w = workers();
    const names = new ServedNames(w);
    w.down = true;
    const failed = await names.observe("ml/q2", "ml", [pod("a")]);
    assert.deepEqual([...failed], [["a", { error: "a: 14 UNAVAILABLE: No connection established" }]]);
    w.down = false;
    assert.deepEqual([...(await names.observe("ml/q2", "ml", [pod("a")]))], [["a", { names: ["q2"] }]]);
    assert.equal(w.asked.length, 2);
  });

  it("forgets the answers of a deleted model", async () => {
    const w = workers();
    const names = new ServedNames(w);
    await names.observe("ml/q2", "ml", [pod("a")]);
    names.forget("ml/q2");
    await names.observe("ml/q2", "ml", [pod("a")]);
    assert.equal(w.asked.length, 2);
  });
});
