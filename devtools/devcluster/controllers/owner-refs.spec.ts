import assert from "node:assert/strict";
import type { KubeObject } from "../../../services/kube/kube-object.ts";
import { controllerOf, controllerRef, isControlledBy } from "./owner-refs.ts";

const owner: KubeObject = { apiVersion: "apps/v1", kind: "ReplicaSet", metadata: { name: "rs", uid: "u1" } };

describe("owner-refs", () => {
  it("builds a controller reference and recognises what it controls", () => {
    const ref = controllerRef(owner);
    assert.deepEqual(ref, {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      name: "rs",
      uid: "u1",
      controller: true,
      blockOwnerDeletion: true,
    });
    const pod: KubeObject = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "p", ownerReferences: [ref] },
    };
    assert.equal(isControlledBy(pod, owner), true);
    assert.equal(controllerOf({ ...pod, metadata: { name: "q" } }), undefined);
    assert.equal(isControlledBy(pod, { ...owner, metadata: { uid: "u2" } }), false);
  });
});
