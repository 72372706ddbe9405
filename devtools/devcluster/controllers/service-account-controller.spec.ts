import assert from "node:assert/strict";
import { NAMESPACES, SERVICEACCOUNTS } from "../objects/refs.ts";
import { controllerCluster } from "./test-controllers.ts";

describe("service-account-controller", () => {
  it("gives every namespace a default ServiceAccount, and brings it back when deleted", async () => {
    const { api, settle } = controllerCluster();
    api.create(NAMESPACES, "", { apiVersion: "v1", kind: "Namespace", metadata: { name: "team" } });
    await settle();
    assert.equal(api.get(SERVICEACCOUNTS, "team", "default").metadata.name, "default");
    assert.ok(api.get(SERVICEACCOUNTS, "kube-system", "default"));
    api.delete(SERVICEACCOUNTS, "team", "default");
    await settle();
    assert.ok(api.get(SERVICEACCOUNTS, "team", "default"));
  });
});
