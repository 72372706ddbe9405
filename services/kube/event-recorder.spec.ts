import assert from "node:assert/strict";
import { type DevCluster, startDevCluster } from "../../operator/testing/dev-cluster.ts";
import { createLogger } from "../kernel/log.ts";
import { ManualClock } from "../kernel/manual-clock.ts";
import { ApiEventRecorder, kubeClientEvents } from "./event-recorder.ts";
import type { KubeObject } from "./kube-object.ts";
import { EVENTS } from "./resources.ts";

describe("event recorder", () => {
  let cluster: DevCluster;
  before(async () => {
    cluster = await startDevCluster({ crds: false });
  });
  after(() => cluster.close());

  it("creates an Event about the object and counts repeats of the same one", async () => {
    const client = cluster.client();
    const clock = new ManualClock();
    const events = new ApiEventRecorder(kubeClientEvents(client), {
      component: "tessera-operator",
      clock,
      log: createLogger("e", "silent"),
    });
    const model: KubeObject = {
      apiVersion: "serving.tessera.dev/v1alpha1",
      kind: "InferenceModel",
      metadata: { name: "tiny", namespace: "default", uid: "u1" },
    };
    events.record(model, "Normal", "CreatedPods", "created 2 pods");
    await events.flush();
    await clock.advance(5_000);
    events.record(model, "Normal", "CreatedPods", "created 2 pods");
    events.record(model, "Warning", "InsufficientCapacity", "no room");
    await events.flush();
    const list = await client.list<KubeObject & Record<string, unknown>>(EVENTS, { namespace: "default" });
    const byReason = Object.fromEntries(list.items.map((e) => [e["reason"], e]));
    assert.equal(list.items.length, 2);
    assert.deepEqual(
      [
        byReason["CreatedPods"]?.["count"],
        byReason["CreatedPods"]?.["lastTimestamp"],
        byReason["CreatedPods"]?.["firstTimestamp"],
      ],
      [2, "2025-01-01T00:00:05Z", "2025-01-01T00:00:00Z"],
    );
    assert.deepEqual(byReason["InsufficientCapacity"]?.["involvedObject"], {
      apiVersion: "serving.tessera.dev/v1alpha1",
      kind: "InferenceModel",
      name: "tiny",
      namespace: "default",
      uid: "u1",
    });
  });

  it("writes a new Event when the one it counted is gone, and drops one it cannot write", async () => {
    const created: string[] = [];
    let bumps = 0;
    const events = new ApiEventRecorder(
      {
        create: async (_namespace, event) => {
          if (event["reason"] === "Refused") throw new Error("forbidden");
          created.push(event.metadata.name ?? "");
        },
        bump: async () => {
          bumps++;
          throw new Error("not found");
        },
      },
      { component: "tessera-operator", clock: new ManualClock() },
    );
    const model: KubeObject = { metadata: { name: "tiny", namespace: "default", uid: "u1" } };
    events.record(model, "Normal", "CreatedPods", "created 2 pods");
    await events.flush();
    events.record(model, "Normal", "CreatedPods", "created 2 pods");
    events.record(model, "Warning", "Refused", "no");
    await events.flush();
    assert.equal(bumps, 1);
    assert.equal(created.length, 2);
    assert.notEqual(created[0], created[1]);
  });
});
