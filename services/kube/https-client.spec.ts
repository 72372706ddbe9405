import assert from "node:assert/strict";
import { type DevCluster, startDevCluster } from "../../operator/testing/dev-cluster.ts";
import { API_VERSION, INFERENCE_MODELS } from "../api/group.ts";
import { isConflict, isGone, KubeApiError } from "./api-error.ts";
import type { HttpsKubeClient } from "./https-client.ts";
import type { WatchEvent } from "./kube-client.ts";
import type { KubeObject } from "./kube-object.ts";
import { PODS } from "./resources.ts";

const pod = (name: string, labels: Record<string, string> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, labels },
  spec: { containers: [{ name: "c", image: "i" }] },
});

describe("HTTPS kube client against the dev cluster", () => {
  let cluster: DevCluster;
  let client: HttpsKubeClient;
  before(async () => {
    cluster = await startDevCluster();
    client = cluster.client();
  });
  after(() => cluster.close());

  it("creates, gets, lists by label, merge-patches and deletes", async () => {
    await client.create(PODS, "default", pod("a", { app: "x" }));
    await client.create(PODS, "default", pod("b", { app: "y" }));
    assert.equal((await client.get(PODS, "default", "a"))?.metadata.name, "a");
    assert.equal(await client.get(PODS, "default", "missing"), undefined);
    const list = await client.list(PODS, { namespace: "default", labelSelector: "app=x" });
    assert.deepEqual(
      list.items.map((p) => p.metadata.name),
      ["a"],
    );
    assert.ok(Number(list.resourceVersion) > 0);
    const patched = await client.mergePatch(PODS, "default", "a", { metadata: { labels: { extra: "1" } } });
    assert.equal(patched.metadata.labels?.["extra"], "1");
    assert.equal(await client.delete(PODS, "default", "a"), true);
    assert.equal(await client.delete(PODS, "default", "a"), false);
  });

  it("applies server-side (create, then update) and applies status to the subresource", async () => {
    const model = (replicas: number): KubeObject => ({
      apiVersion: API_VERSION,
      kind: "InferenceModel",
      metadata: { name: "m" },
      spec: { model: { path: "/m" }, replicas },
    });
    const created = await client.apply(INFERENCE_MODELS, "default", model(1));
    assert.equal(created.metadata.generation, 1);
    const updated = await client.apply(INFERENCE_MODELS, "default", model(2));
    assert.equal((updated["spec"] as { replicas: number }).replicas, 2);
    const status = {
      apiVersion: API_VERSION,
      kind: "InferenceModel",
      metadata: { name: "m" },
      status: { readyReplicas: 2 },
    };
    const withStatus = await client.apply(INFERENCE_MODELS, "default", status, {
      subresource: "status",
      force: true,
    });
    assert.deepEqual(withStatus["status"], { readyReplicas: 2 });
    assert.equal(withStatus.metadata.generation, 2);
  });

  it("reports rejected writes with their HTTP status and the API's message", async () => {
    const stale = { ...pod("c"), metadata: { name: "c", resourceVersion: "1" } };
    await client.create(PODS, "default", pod("c"));
    const conflict = await client.update(PODS, "default", stale).catch((err: unknown) => err);
    assert.ok(isConflict(conflict));
    const invalid = await client
      .apply(INFERENCE_MODELS, "default", {
        apiVersion: API_VERSION,
        kind: "InferenceModel",
        metadata: { name: "bad" },
        spec: { model: { path: "/m" }, replicas: -1 },
      })
      .catch((err: unknown) => err);
    assert.ok(invalid instanceof KubeApiError);
    assert.equal(invalid.status, 422);
    assert.match(invalid.message, /spec\.replicas/);
  });

  it("watches from a resourceVersion: ADDED, DELETED", async () => {
    const { resourceVersion } = await client.list(PODS, { namespace: "default" });
    const events: WatchEvent[] = [];
    const handle = client.watch(PODS, { namespace: "default", resourceVersion }, (e) => void events.push(e));
    await client.create(PODS, "default", pod("w"));
    await client.delete(PODS, "default", "w");
    while (events.filter((e) => e.type !== "BOOKMARK").length < 2) await new Promise((r) => setTimeout(r, 5));
    handle.stop();
    await handle.done;
    assert.deepEqual(
      events.filter((e) => e.type !== "BOOKMARK").map((e) => [e.type, e.object.metadata.name]),
      [
        ["ADDED", "w"],
        ["DELETED", "w"],
      ],
    );
  });

  it("fails a watch from a resourceVersion the server no longer keeps with 410 Gone", async () => {
    const small = await startDevCluster({ crds: false, eventWindow: 2 });
    try {
      const c = small.client();
      const { resourceVersion } = await c.list(PODS, { namespace: "default" });
      for (const name of ["x", "y", "z"]) await c.create(PODS, "default", pod(name));
      const handle = c.watch(PODS, { namespace: "default", resourceVersion }, () => {});
      const err = await handle.done.then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(isGone(err), String(err));
    } finally {
      await small.close();
    }
  });
});
