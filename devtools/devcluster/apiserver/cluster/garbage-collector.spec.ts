import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { CONFIGMAPS, configMap, testCluster } from "./test-cluster.ts";

const owned = (owner: KubeObject) => ({
  ownerReferences: [
    { apiVersion: "v1", kind: "ConfigMap", name: owner.metadata.name ?? "", uid: owner.metadata.uid ?? "" },
  ],
});

describe("garbage-collector", () => {
  it("deletes dependents whose owners are gone, but not those with a living owner", async () => {
    const { api, settle } = testCluster({ controllers: true });
    const a = api.create(CONFIGMAPS, "default", configMap("a"));
    const b = api.create(CONFIGMAPS, "default", configMap("b"));
    api.create(CONFIGMAPS, "default", configMap("only-a", owned(a)));
    api.create(
      CONFIGMAPS,
      "default",
      configMap("both", { ownerReferences: [...owned(a).ownerReferences, ...owned(b).ownerReferences] }),
    );
    api.delete(CONFIGMAPS, "default", "a");
    await settle();
    const names = api.list(CONFIGMAPS, { namespace: "default" }).items.map((o) => o.metadata.name);
    assert.deepEqual(names, ["b", "both"]);
    assert.deepEqual(
      api.get(CONFIGMAPS, "default", "both").metadata.ownerReferences?.map((r) => r.name),
      ["b"],
    );
  });

  it("collects objects created with an owner that does not exist", async () => {
    const { api, settle } = testCluster({ controllers: true });
    api.create(
      CONFIGMAPS,
      "default",
      configMap("dangling", {
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "ghost", uid: "0000" }],
      }),
    );
    await settle();
    assert.equal(api.list(CONFIGMAPS, { namespace: "default" }).items.length, 0);
  });

  it("removes an owner deleted in the foreground after its dependents", async () => {
    const { api, settle } = testCluster({ controllers: true });
    const owner = api.create(CONFIGMAPS, "default", configMap("owner"));
    const child = api.create(CONFIGMAPS, "default", configMap("child", owned(owner)));
    api.create(CONFIGMAPS, "default", configMap("grandchild", owned(child)));
    api.delete(CONFIGMAPS, "default", "owner", { propagationPolicy: "Foreground" });
    await settle();
    assert.equal(api.list(CONFIGMAPS, { namespace: "default" }).items.length, 0);
  });
});
