import assert from "node:assert/strict";
import { crdKind, endpointSliceKind, leaseKind, roleBindingKind } from "./other-kinds.ts";

describe("other-kinds", () => {
  it("declares the discovery, coordination, RBAC and CRD kinds with their columns", () => {
    assert.deepEqual(
      [endpointSliceKind.group, leaseKind.group, crdKind.namespaced],
      ["discovery.k8s.io", "coordination.k8s.io", false],
    );
    const binding = { apiVersion: "", kind: "", metadata: {}, roleRef: { kind: "Role", name: "r" } };
    assert.equal(roleBindingKind.printerColumns[0]?.cell(binding, 0), "Role/r");
    const slice = {
      apiVersion: "",
      kind: "",
      metadata: {},
      addressType: "IPv4",
      ports: [{ port: 80 }],
      endpoints: [{ addresses: ["127.0.0.2"] }],
    };
    assert.deepEqual(
      endpointSliceKind.printerColumns.slice(0, 3).map((c) => c.cell(slice, 0)),
      ["IPv4", "80", "127.0.0.2"],
    );
  });
});
