import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { objectMetaInfo } from "../resources/type-info.ts";
import { readManagers, recordUpdate } from "./managed-fields.ts";

const info = { fields: { metadata: objectMetaInfo } };
const cm = (data: Record<string, string>): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "c" },
  data,
});

describe("managed-fields", () => {
  it("gives the creator every field, then moves changed fields to whoever changes them", () => {
    const first = cm({ a: "1", b: "1" });
    recordUpdate(undefined, first, { manager: "alice", apiVersion: "v1", now: 0, info });
    const second = { ...cm({ a: "2", b: "1" }), metadata: { ...first.metadata } };
    recordUpdate(first, second, { manager: "bob", apiVersion: "v1", now: 0, info });
    const owners = Object.fromEntries(
      readManagers(second).map((m) => [m.manager, [...m.paths].map((p) => p.replaceAll("\u0000", "/"))]),
    );
    assert.deepEqual(owners, { alice: ["f:data/f:b"], bob: ["f:data/f:a"] });
    assert.equal(second.metadata.managedFields?.[1]?.operation, "Update");
  });
});
