import assert from "node:assert/strict";
import { podSpecInfo } from "../resources/pod-type-info.ts";
import { objectMetaInfo } from "../resources/type-info.ts";
import { applyStrategicMergePatch } from "./strategic-merge-patch.ts";

const info = { fields: { metadata: objectMetaInfo, spec: podSpecInfo } };
const pod = {
  metadata: { finalizers: ["a"], labels: { x: "1" } },
  spec: {
    containers: [
      { name: "a", image: "1", env: [{ name: "E", value: "1" }] },
      { name: "b", image: "1" },
    ],
    tolerations: [{ key: "t" }],
  },
};

describe("strategic-merge-patch", () => {
  it("merges lists by their merge key and keeps untouched elements", () => {
    const result = applyStrategicMergePatch(
      pod,
      { spec: { containers: [{ name: "a", env: [{ name: "F", value: "2" }] }] } },
      info,
    ) as typeof pod;
    assert.deepEqual(result.spec.containers[0], {
      name: "a",
      image: "1",
      env: [
        { name: "E", value: "1" },
        { name: "F", value: "2" },
      ],
    });
    assert.equal(result.spec.containers.length, 2);
  });

  it("honours $patch delete/replace, $setElementOrder and $deleteFromPrimitiveList", () => {
    const deleted = applyStrategicMergePatch(
      pod,
      { spec: { containers: [{ name: "b", $patch: "delete" }] } },
      info,
    ) as typeof pod;
    assert.deepEqual(
      deleted.spec.containers.map((c) => c.name),
      ["a"],
    );
    const ordered = applyStrategicMergePatch(
      pod,
      { spec: { "$setElementOrder/containers": [{ name: "b" }, { name: "a" }] } },
      info,
    ) as typeof pod;
    assert.deepEqual(
      ordered.spec.containers.map((c) => c.name),
      ["b", "a"],
    );
    const replaced = applyStrategicMergePatch(
      pod,
      { spec: { $patch: "replace", containers: [] } },
      info,
    ) as typeof pod;
    assert.deepEqual(replaced.spec, { containers: [] });
    const finalizers = applyStrategicMergePatch(
      pod,
      { metadata: { "$deleteFromPrimitiveList/finalizers": ["a"] } },
      info,
    ) as typeof pod;
    assert.deepEqual(finalizers.metadata.finalizers, []);
  });

  it("unions primitive sets, replaces atomic lists and deletes keys set to null", () => {
    const result = applyStrategicMergePatch(
      pod,
      { metadata: { finalizers: ["b"], labels: { x: null } }, spec: { tolerations: [{ key: "u" }] } },
      info,
    ) as typeof pod;
    assert.deepEqual(result.metadata.finalizers, ["a", "b"]);
    assert.deepEqual(result.metadata.labels, {});
    assert.deepEqual(result.spec.tolerations, [{ key: "u" }]);
  });
});
