import assert from "node:assert/strict";
import { defineKind } from "./define-kind.ts";
import { compareVersions, ResourceRegistry } from "./registry.ts";

describe("registry", () => {
  it("serves the built-in kinds by resource and by kind", () => {
    const registry = new ResourceRegistry();
    assert.equal(registry.byResource("apps", "v1", "deployments")?.kind, "Deployment");
    assert.equal(registry.byKind("", "v1", "Secret")?.plural, "secrets");
    assert.ok(registry.groupVersions().some((g) => g.group === "rbac.authorization.k8s.io"));
  });

  it("adds and removes custom resources and tells listeners", () => {
    const registry = new ResourceRegistry();
    let changes = 0;
    registry.onChange(() => changes++);
    registry.setCustom("things.example.dev", [
      defineKind({ group: "example.dev", version: "v1", kind: "Thing", plural: "things", namespaced: true }),
    ]);
    assert.equal(registry.byResource("example.dev", "v1", "things")?.kind, "Thing");
    registry.setCustom("things.example.dev", []);
    assert.equal(registry.byResource("example.dev", "v1", "things"), undefined);
    assert.equal(changes, 2);
  });

  it("orders versions GA first, then beta, then alpha", () => {
    assert.deepEqual(["v1alpha1", "v1beta1", "v2", "v1", "v2beta1"].sort(compareVersions), [
      "v2",
      "v1",
      "v2beta1",
      "v1beta1",
      "v1alpha1",
    ]);
  });
});
