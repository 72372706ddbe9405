// Conformance-style checks of watch over HTTPS: event order, resuming from a resourceVersion,
// selector transitions, initial events and bookmarks, timeoutSeconds, and 410 Expired + relist.
import assert from "node:assert/strict";
import { type ApiServer, startApiServer } from "../../devtools/devcluster/apiserver/api-server.ts";
import { createLogger } from "../../services/kernel/log.ts";
import { KubeHttp } from "./http-client.ts";

const CM = "/api/v1/namespaces/default/configmaps";
const configMap = (name: string, labels: Record<string, string> = {}, data: Record<string, string> = {}) => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, labels },
  data,
});

describe("dev cluster watch semantics (e2e)", () => {
  let server: ApiServer;
  let http: KubeHttp;

  before(async () => {
    server = await startApiServer(
      { eventWindow: 20, bookmarkIntervalSeconds: 0.05 },
      { log: createLogger("watch-e2e", "warn") },
    );
    http = new KubeHttp(server.url, server.caCert, server.admin);
  });
  after(() => server.close());

  it("flushes headers at once and streams ADDED, MODIFIED, DELETED in order from a resourceVersion", async () => {
    const list = await http.get<{ metadata: { resourceVersion: string } }>(CM);
    const watch = await http.watch(`${CM}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`);
    assert.equal(watch.status, 200, "headers arrive before any event");
    await http.post(CM, configMap("w1"));
    const created = await http.get<{ metadata: { resourceVersion: string } }>(`${CM}/w1`);
    await http.put(`${CM}/w1`, {
      ...configMap("w1", {}, { k: "v" }),
      metadata: { name: "w1", resourceVersion: created.body.metadata.resourceVersion },
    });
    await http.delete(`${CM}/w1`);
    const types = [];
    for (let i = 0; i < 3; i++) types.push((await watch.next())?.type);
    assert.deepEqual(types, ["ADDED", "MODIFIED", "DELETED"]);
    watch.close();

    const resumed = await http.watch(
      `${CM}?watch=true&resourceVersion=${created.body.metadata.resourceVersion}`,
    );
    assert.deepEqual([(await resumed.next())?.type, (await resumed.next())?.type], ["MODIFIED", "DELETED"]);
    resumed.close();
  });

  it("turns label changes into ADDED / DELETED for a selected watch", async () => {
    const watch = await http.watch(`${CM}?watch=true&labelSelector=${encodeURIComponent("tier in (web)")}`);
    await http.post(CM, configMap("sel", { tier: "db" }));
    await http.patch(`${CM}/sel`, "application/merge-patch+json", { metadata: { labels: { tier: "web" } } });
    await http.patch(`${CM}/sel`, "application/merge-patch+json", {
      metadata: { labels: { tier: "cache" } },
    });
    const first = await watch.next();
    const second = await watch.next();
    assert.deepEqual([first?.type, second?.type], ["ADDED", "DELETED"]);
    assert.equal((second?.object["metadata"] as { name: string } | undefined)?.name, "sel");
    watch.close();
    await http.delete(`${CM}/sel`);
  });

  it("sends initial events then a bookmark marking their end, and periodic bookmarks", async () => {
    await http.post(CM, configMap("initial"));
    const watch = await http.watch(
      `${CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&fieldSelector=metadata.name%3Dinitial`,
    );
    assert.equal((await watch.next())?.type, "ADDED");
    const end = await watch.next();
    assert.equal(end?.type, "BOOKMARK");
    const meta = end?.object["metadata"] as { resourceVersion: string; annotations: Record<string, string> };
    assert.equal(meta.annotations["k8s.io/initial-events-end"], "true");
    assert.match(meta.resourceVersion, /^\d+$/);
    assert.equal((await watch.next(2_000))?.type, "BOOKMARK");
    watch.close();
    await http.delete(`${CM}/initial`);
  });

  it("ends the stream after timeoutSeconds", async () => {
    const started = Date.now();
    const watch = await http.watch(
      `${CM}?watch=true&timeoutSeconds=1&resourceVersion=${server.api.resourceVersion}`,
    );
    assert.equal(await watch.next(3_000), undefined);
    assert.ok(Date.now() - started >= 900);
  });

  it("answers a too-old resourceVersion with 410 Expired, and a relist gives a version to watch from", async () => {
    const old = server.api.resourceVersion;
    for (let i = 0; i < 25; i++) await http.post(CM, configMap(`churn-${i}`));
    const watch = await http.watch(`${CM}?watch=true&resourceVersion=${old}`);
    const error = await watch.next();
    assert.equal(error?.type, "ERROR");
    assert.equal(error?.object["code"], 410);
    assert.equal(error?.object["reason"], "Expired");
    const relist = await http.get<{ metadata: { resourceVersion: string }; items: unknown[] }>(
      `${CM}?labelSelector=`,
    );
    assert.ok(relist.body.items.length >= 25);
    const fresh = await http.watch(
      `${CM}?watch=true&resourceVersion=${relist.body.metadata.resourceVersion}`,
    );
    await http.delete(`${CM}/churn-0`);
    assert.equal((await fresh.next())?.type, "DELETED");
    fresh.close();
  });
});
