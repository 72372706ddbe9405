import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import { CONFIGMAPS, CRDS, configMap, NAMESPACES, testCluster } from "./test-cluster.ts";

describe("namespace-controller", () => {
  it("empties a terminating namespace and then removes it", async () => {
    const { api, settle } = testCluster({ controllers: true });
    api.create(NAMESPACES, "", { apiVersion: "v1", kind: "Namespace", metadata: { name: "tmp" } });
    api.create(CONFIGMAPS, "tmp", configMap("a"));
    const deleting = api.delete(NAMESPACES, "", "tmp");
    assert.equal((deleting.object["status"] as { phase: string }).phase, "Terminating");
    await settle();
    assert.throws(
      () => api.get(NAMESPACES, "", "tmp"),
      (err) => statusCodeOf(err) === 404,
    );
  });

  it("deletes a CRD's objects, then the CRD, then stops serving the resource", async () => {
    const { api, settle } = testCluster({ controllers: true });
    api.create(CRDS, "", {
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
            schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
          },
        ],
      },
    });
    const things = { group: "example.dev", version: "v1", resource: "things" };
    api.create(things, "default", { apiVersion: "example.dev/v1", kind: "Thing", metadata: { name: "t" } });
    api.delete(CRDS, "", "things.example.dev");
    await settle();
    assert.throws(
      () => api.get(CRDS, "", "things.example.dev"),
      (err) => statusCodeOf(err) === 404,
    );
    assert.equal(api.registry.byResource("example.dev", "v1", "things"), undefined);
  });
});
