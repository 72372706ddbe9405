import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { CONFIGMAPS, configMap, NAMESPACES, PODS, testCluster } from "./test-cluster.ts";

describe("cluster-api delete", () => {
  it("deletes at once without finalizers, and checks preconditions", () => {
    const { api } = testCluster();
    const made = api.create(CONFIGMAPS, "default", configMap("a"));
    assert.throws(
      () => api.delete(CONFIGMAPS, "default", "a", { preconditions: { uid: "other" } }),
      (err) => statusCodeOf(err) === 409,
    );
    assert.equal(
      api.delete(CONFIGMAPS, "default", "a", { preconditions: { uid: made.metadata.uid ?? "" } }).deleted,
      true,
    );
  });

  it("refuses to delete the system namespaces", () => {
    const { api } = testCluster();
    assert.throws(
      () => api.delete(NAMESPACES, "", "default"),
      (err) => statusCodeOf(err) === 403,
    );
  });

  it("marks objects with finalizers as deleting until the last finalizer goes", () => {
    const { api } = testCluster();
    api.create(CONFIGMAPS, "default", configMap("f", { finalizers: ["x"] }));
    const pending = api.delete(CONFIGMAPS, "default", "f");
    assert.equal(pending.deleted, false);
    assert.ok(pending.object.metadata.deletionTimestamp);
    api.removeFinalizer(CONFIGMAPS, "default", "f", "x", "test");
    assert.throws(
      () => api.get(CONFIGMAPS, "default", "f"),
      (err) => statusCodeOf(err) === 404,
    );
  });

  it("leaves scheduled pods to the kubelet when graceful pod deletion is on", () => {
    const { api } = testCluster({ gracefulPodDeletion: true });
    const pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p" },
      spec: { nodeName: "node-1", terminationGracePeriodSeconds: 5, containers: [{ name: "c", image: "i" }] },
    };
    api.create(PODS, "default", pod);
    const graceful = api.delete(PODS, "default", "p");
    assert.deepEqual([graceful.deleted, graceful.object.metadata.deletionGracePeriodSeconds], [false, 5]);
    assert.equal(api.delete(PODS, "default", "p", { gracePeriodSeconds: 0 }).deleted, true);
  });
});
