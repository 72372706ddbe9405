import assert from "node:assert/strict";
import { CONFIGMAPS, configMap, testCluster } from "../apiserver/cluster/test-cluster.ts";
import { clusterEventRecorder } from "./cluster-events.ts";
import { EVENTS } from "./refs.ts";

describe("cluster events", () => {
  it("records an event about an object and counts repeats instead of adding events", () => {
    const { api, clock } = testCluster();
    const subject = api.create(CONFIGMAPS, "default", configMap("cm"));
    const recorder = clusterEventRecorder(api, clock, "kubelet", "node-a");
    recorder.record(subject, "Warning", "Unhealthy", "Liveness probe failed");
    recorder.record(subject, "Warning", "Unhealthy", "Liveness probe failed");
    recorder.record(subject, "Normal", "Started", "Started container c");
    const events = api.list(EVENTS, { namespace: "default" }).items;
    assert.equal(events.length, 2);
    const unhealthy = events.find((e) => e["reason"] === "Unhealthy");
    assert.equal(unhealthy?.["count"], 2);
    assert.deepEqual(unhealthy?.["involvedObject"], {
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "cm",
      namespace: "default",
      uid: subject.metadata.uid,
      resourceVersion: subject.metadata.resourceVersion,
    });
    assert.deepEqual(unhealthy?.["source"], { component: "kubelet", host: "node-a" });
  });

  it("drops events it cannot write", () => {
    const { api, clock } = testCluster();
    const recorder = clusterEventRecorder(api, clock, "kubelet");
    const ghost = configMap("ghost", { namespace: "missing", uid: "u" });
    assert.doesNotThrow(() => recorder.record(ghost, "Normal", "X", "y"));
  });
});
