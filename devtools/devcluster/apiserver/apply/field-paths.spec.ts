import assert from "node:assert/strict";
import { podSpecInfo } from "../resources/pod-type-info.ts";
import { objectMetaInfo } from "../resources/type-info.ts";
import { fieldPaths, formatPath, fromFieldsV1, keyPath, toFieldsV1, valueAt } from "./field-paths.ts";

const info = { fields: { metadata: objectMetaInfo, spec: podSpecInfo } };
const pod = {
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", labels: { app: "web" }, finalizers: ["f"] },
  spec: { containers: [{ name: "c", image: "i", ports: [{ containerPort: 80 }] }] },
};

describe("field-paths", () => {
  it("lists owned leaves, list-map elements (with defaulted keys) and set members, without server fields", () => {
    const tree = toFieldsV1(fieldPaths(pod, info));
    assert.deepEqual(tree, {
      "f:metadata": { "f:labels": { "f:app": {} }, "f:finalizers": { 'v:"f"': {} } },
      "f:spec": {
        "f:containers": {
          'k:{"name":"c"}': {
            ".": {},
            "f:image": {},
            "f:name": {},
            "f:ports": { 'k:{"containerPort":80,"protocol":"TCP"}': { ".": {}, "f:containerPort": {} } },
          },
        },
      },
    });
    assert.deepEqual([...fromFieldsV1(tree)].sort(), [...fieldPaths(pod, info)].sort());
  });

  it("looks values up by path and prints paths for conflicts", () => {
    const path = ["f:spec", "f:containers", 'k:{"name":"c"}', "f:image"];
    assert.deepEqual(valueAt(pod, path, info), { found: true, value: "i" });
    assert.equal(valueAt(pod, ["f:spec", "f:nope"], info).found, false);
    assert.equal(formatPath(path), '.spec.containers[name="c"].image');
    assert.deepEqual(keyPath(""), []);
  });
});
