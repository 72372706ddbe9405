import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { establishedStatus, resourceTypesOfCrd, typeInfoOfSchema, validateCrd } from "./crd-types.ts";

const crd: KubeObject = {
  apiVersion: "apiextensions.k8s.io/v1",
  kind: "CustomResourceDefinition",
  metadata: { name: "things.example.dev" },
  spec: {
    group: "example.dev",
    scope: "Cluster",
    names: { plural: "things", kind: "Thing", shortNames: ["th"] },
    versions: [
      { name: "v1beta1", served: true, storage: false, schema: { openAPIV3Schema: { type: "object" } } },
      {
        name: "v1",
        served: true,
        storage: true,
        subresources: { status: {}, scale: { specReplicasPath: ".spec.n", statusReplicasPath: ".status.n" } },
        additionalPrinterColumns: [{ name: "N", type: "integer", jsonPath: ".spec.n" }],
        schema: {
          openAPIV3Schema: {
            type: "object",
            properties: { spec: { type: "object", properties: { n: { type: "integer" } } } },
          },
        },
      },
    ],
  },
};

describe("crd-types", () => {
  it("serves one resource type per served version, with subresources and printer columns", () => {
    const [beta, v1] = resourceTypesOfCrd(crd);
    assert.deepEqual(
      [beta?.version, v1?.version, v1?.storageVersion, v1?.namespaced],
      ["v1beta1", "v1", "v1", false],
    );
    assert.deepEqual(v1?.subresources.scale?.specReplicasPath, ".spec.n");
    assert.equal(
      v1?.printerColumns[0]?.cell({ apiVersion: "", kind: "", metadata: {}, spec: { n: 4 } }, 0),
      4,
    );
    assert.equal(beta?.printerColumns[0]?.name, "Age");
  });

  it("derives merge metadata from list-type extensions", () => {
    const info = typeInfoOfSchema({
      type: "array",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
      items: { type: "object", properties: { name: { type: "string", default: "x" } } },
    });
    assert.deepEqual(info.list, { type: "map", keys: ["name"], keyDefaults: { name: "x" } });
  });

  it("validates names, scope and storage versions, and reports an established status", () => {
    assert.deepEqual(validateCrd(crd), []);
    const bad = {
      ...crd,
      metadata: { name: "wrong" },
      spec: { ...(crd["spec"] as object), scope: "Galaxy" },
    };
    assert.deepEqual(
      validateCrd(bad).map((e) => e.field),
      ["metadata.name", "spec.scope"],
    );
    const status = establishedStatus(crd, "2025-01-01T00:00:00Z");
    assert.deepEqual(status["storedVersions"], ["v1"]);
  });
});
