import assert from "node:assert/strict";
import type { KubeObject } from "../../../../services/kube/kube-object.ts";
import { statusCodeOf } from "../core/api-status.ts";
import { ObjectStore, type StoreEvent } from "./object-store.ts";

const cm = (name: string, rv?: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, namespace: "default", ...(rv ? { resourceVersion: rv } : {}) },
});

describe("object-store", () => {
  it("stamps increasing resourceVersions and enforces them on update", () => {
    const store = new ObjectStore();
    const a = store.create("configmaps", cm("a"));
    assert.equal(a.metadata.resourceVersion, "1");
    assert.equal(store.update("configmaps", cm("a", "1")).metadata.resourceVersion, "2");
    assert.throws(
      () => store.update("configmaps", cm("a", "1")),
      (err) => statusCodeOf(err) === 409,
    );
    assert.throws(
      () => store.create("configmaps", cm("a")),
      (err) => statusCodeOf(err) === 409,
    );
    assert.equal(store.delete("configmaps", "default", "a").metadata.resourceVersion, "3");
    assert.equal(store.get("configmaps", "default", "a"), undefined);
  });

  it("replays logged events after a revision, then streams new ones", () => {
    const store = new ObjectStore();
    store.create("configmaps", cm("a"));
    store.create("configmaps", cm("b"));
    const seen: StoreEvent[] = [];
    const stop = store.watch(1, (e) => seen.push(e));
    store.delete("configmaps", "default", "a");
    stop();
    store.create("configmaps", cm("c"));
    assert.deepEqual(
      seen.map((e) => `${e.type}:${e.object.metadata.name}`),
      ["ADDED:b", "DELETED:a"],
    );
  });

  it("answers 410 for revisions older than the event window", () => {
    const store = new ObjectStore({ eventWindow: 2 });
    for (const name of ["a", "b", "c", "d"]) store.create("configmaps", cm(name));
    assert.throws(
      () => store.watch(1, () => {}),
      (err) => statusCodeOf(err) === 410,
    );
    assert.doesNotThrow(() => store.watch(2, () => {})());
  });

  it("snapshots and restores", () => {
    const store = new ObjectStore();
    store.create("configmaps", cm("a"));
    const copy = new ObjectStore();
    copy.restore(store.snapshot());
    assert.equal(copy.get("configmaps", "default", "a")?.metadata.resourceVersion, "1");
    assert.equal(copy.create("configmaps", cm("b")).metadata.resourceVersion, "2");
  });
});
