import assert from "node:assert/strict";
import { statusCodeOf } from "../core/api-status.ts";
import type { WatchEvent } from "./api-types.ts";
import { CONFIGMAPS, configMap, testCluster } from "./test-cluster.ts";

describe("cluster-api reads", () => {
  it("gets, lists with selectors and pages with continue tokens", () => {
    const { api } = testCluster();
    for (const name of ["a", "b", "c"])
      api.create(CONFIGMAPS, "default", configMap(name, { labels: { tier: name === "c" ? "db" : "web" } }));
    assert.equal(api.get(CONFIGMAPS, "default", "a").metadata.name, "a");
    assert.throws(
      () => api.get(CONFIGMAPS, "default", "zz"),
      (err) => statusCodeOf(err) === 404,
    );
    assert.deepEqual(
      api
        .list(CONFIGMAPS, { namespace: "default", labelSelector: "tier=web" })
        .items.map((o) => o.metadata.name),
      ["a", "b"],
    );
    const first = api.list(CONFIGMAPS, { namespace: "default", limit: 2 });
    assert.equal(first.remainingItemCount, 1);
    assert.deepEqual(
      api
        .list(CONFIGMAPS, { namespace: "default", ...(first.continue ? { continue: first.continue } : {}) })
        .items.map((o) => o.metadata.name),
      ["c"],
    );
    assert.throws(
      () => api.resolve({ group: "nope", version: "v1", resource: "things" }),
      (err) => statusCodeOf(err) === 404,
    );
  });

  it("watches in process: initial state, then changes, with selector transitions", () => {
    const { api } = testCluster();
    api.create(CONFIGMAPS, "default", configMap("pre", { labels: { app: "x" } }));
    const events: string[] = [];
    const handle = api.watch(CONFIGMAPS, { namespace: "default", labelSelector: "app=x" }, (e: WatchEvent) =>
      events.push(`${e.type}:${e.object.metadata.name}`),
    );
    api.create(CONFIGMAPS, "default", configMap("new", { labels: { app: "x" } }));
    api.patch(CONFIGMAPS, "default", "new", "merge", { metadata: { labels: { app: "y" } } });
    api.create(CONFIGMAPS, "default", configMap("other"));
    handle.stop();
    api.delete(CONFIGMAPS, "default", "pre");
    assert.deepEqual(events, ["ADDED:pre", "ADDED:new", "DELETED:new"]);
  });

  it("refuses to resume from a compacted resourceVersion", () => {
    const { api, store } = testCluster();
    const rv = api.resourceVersion;
    api.create(CONFIGMAPS, "default", configMap("a"));
    store.compact();
    assert.throws(
      () => api.watch(CONFIGMAPS, { resourceVersion: rv }, () => {}),
      (err) => statusCodeOf(err) === 410,
    );
  });
});
