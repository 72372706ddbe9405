import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { statusCodeOf, toStatus } from "../core/api-status.ts";
import { CONFIGMAPS, CRDS, configMap, DEPLOYMENTS, deployment, testCluster } from "./test-cluster.ts";

const crd: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "things.example.dev" },
  spec: {
    group: "example.dev",
    scope: "Namespaced",
    names: { plural: "things", kind: "Thing" },
    versions: [
      {
        name: "v1",
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: { spec: { type: "object", properties: { n: { type: "integer", default: 1 } } } },
          },
        },
      },
    ],
  },
};
const THINGS = { group: "example.dev", version: "v1", resource: "things" };

describe("cluster-api writes", () => {
  it("creates with system metadata, refuses unknown or terminating namespaces", () => {
    const { api } = testCluster();
    const made = api.create(CONFIGMAPS, "default", configMap("a"), { fieldManager: "me" });
    assert.ok(made.metadata.uid && made.metadata.creationTimestamp && made.metadata.resourceVersion);
    assert.equal(made.metadata.managedFields?.[0]?.manager, "me");
    assert.throws(
      () => api.create(CONFIGMAPS, "nowhere", configMap("a")),
      (err) => toStatus(err).message === 'namespaces "nowhere" not found',
    );
  });

  it("updates with generation bumps only for spec changes, and keeps status to its subresource", () => {
    const { api } = testCluster();
    api.create(DEPLOYMENTS, "default", deployment("d"));
    const withStatus = api.update(
      DEPLOYMENTS,
      "default",
      "d",
      { ...api.get(DEPLOYMENTS, "default", "d"), status: { replicas: 1 } },
      { subresource: "status" },
    );
    assert.deepEqual(
      [withStatus.metadata.generation, (withStatus["status"] as { replicas: number }).replicas],
      [1, 1],
    );
    const scaled = api.patch(DEPLOYMENTS, "default", "d", "merge", {
      spec: { replicas: 3 },
      status: { replicas: 9 },
    });
    assert.deepEqual(
      [scaled.metadata.generation, (scaled["status"] as { replicas: number }).replicas],
      [2, 1],
    );
  });

  it("applies server-side: creates when absent, requires a field manager", () => {
    const { api } = testCluster();
    const applied = api.patch(
      CONFIGMAPS,
      "default",
      "ssa",
      "apply",
      configMap("ssa", {}, { a: "1" }) as never,
      { fieldManager: "tool" },
    );
    assert.equal(applied.metadata.managedFields?.[0]?.operation, "Apply");
    assert.throws(
      () => api.patch(CONFIGMAPS, "default", "ssa", "apply", configMap("ssa") as never),
      (err) => statusCodeOf(err) === 422,
    );
  });

  it("serves a CRD's resource as soon as it is created, defaulting its objects", () => {
    const { api } = testCluster();
    const stored = api.create(CRDS, "", crd);
    assert.equal((stored["status"] as { conditions: { type: string }[] }).conditions[1]?.type, "Established");
    const thing = api.create(THINGS, "default", {
      apiVersion: "example.dev/v1",
      kind: "Thing",
      metadata: { name: "t" },
      spec: {},
    });
    assert.deepEqual(thing["spec"], { n: 1 });
    assert.throws(
      () => api.patch(THINGS, "default", "t", "strategic", { spec: { n: 2 } }),
      (err) => statusCodeOf(err) === 415,
    );
  });

  it("leaves the store alone on dry-run", () => {
    const { api } = testCluster();
    api.create(CONFIGMAPS, "default", configMap("dry"), { dryRun: true });
    assert.throws(
      () => api.get(CONFIGMAPS, "default", "dry"),
      (err) => statusCodeOf(err) === 404,
    );
  });
});
