import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { statusCodeOf, toStatus } from "../core/api-status.ts";
import { objectMetaInfo, setList } from "../resources/type-info.ts";
import { recordUpdate } from "./managed-fields.ts";
import { serverSideApply } from "./server-side-apply.ts";

const info = { fields: { metadata: objectMetaInfo, spec: { fields: { tags: setList } } } };
const config = (spec: Record<string, unknown>): KubeObject => ({
  apiVersion: "example.dev/v1",
  kind: "Thing",
  metadata: { name: "t" },
  spec,
});
const apply = (live: KubeObject | undefined, applied: KubeObject, manager: string, force = false) =>
  serverSideApply({ live, applied, manager, force, info, apiVersion: "example.dev/v1", now: 0 });

describe("server-side-apply", () => {
  it("creates, then removes fields the manager stops applying", () => {
    const created = apply(undefined, config({ a: 1, b: 2, tags: ["x"] }), "me");
    const updated = apply(created, config({ a: 1, tags: ["y"] }), "me");
    assert.deepEqual(updated["spec"], { a: 1, tags: ["y"] });
    assert.equal(updated.metadata.managedFields?.[0]?.manager, "me");
  });

  it("keeps fields another manager still owns, shares equal values, and conflicts on different ones", () => {
    const mine = apply(undefined, config({ a: 1, b: 2 }), "me");
    const shared = apply(mine, config({ a: 1, c: 3 }), "you");
    assert.deepEqual(shared["spec"], { a: 1, b: 2, c: 3 });
    const dropped = apply(shared, config({ b: 2 }), "me");
    assert.deepEqual(dropped["spec"], { a: 1, b: 2, c: 3 }, "a stays: 'you' co-owns it");
    assert.throws(
      () => apply(dropped, config({ c: 4 }), "me"),
      (err) =>
        statusCodeOf(err) === 409 &&
        /conflict with "you" using example.dev\/v1: \.spec\.c/.test(toStatus(err).message),
    );
    const forced = apply(dropped, config({ b: 2, c: 4 }), "me", true);
    assert.equal((forced["spec"] as { c: number }).c, 4);
  });

  it("conflicts with fields an Update manager changed", () => {
    const applied = apply(undefined, config({ replicas: 1 }), "kubectl");
    const scaled = { ...applied, spec: { replicas: 5 }, metadata: { ...applied.metadata } };
    recordUpdate(applied, scaled, { manager: "hpa", apiVersion: "example.dev/v1", now: 0, info });
    assert.throws(
      () => apply(scaled, config({ replicas: 1 }), "kubectl"),
      (err) => toStatus(err).details?.causes?.[0]?.field === ".spec.replicas",
    );
  });
});
