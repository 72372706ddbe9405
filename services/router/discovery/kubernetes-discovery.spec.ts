import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { type DevCluster, startDevCluster } from "../../../operator/testing/dev-cluster.ts";
import { API_VERSION, INFERENCE_MODELS } from "../../api/group.ts";
import type { Shard } from "../../api/inference-model-status.ts";
import { Code, type TesseraError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import type { HttpsKubeClient } from "../../kube/https-client.ts";
import { routerConfigSchema } from "../config/router-config.ts";
import type { EndpointSpec } from "../endpoints/endpoint.ts";
import { startRouter } from "../start-router.ts";
import { KubernetesDiscovery } from "./kubernetes-discovery.ts";

const log = createLogger("test", "silent");
const tokenizer = path.resolve(import.meta.dirname, "../../worker/testdata/hf-reference/tiny-llama");

const shard = (role: Shard["role"], replica: number, fields: Partial<Shard> = {}): Shard => ({
  role,
  replica,
  stage: 0,
  rank: 0,
  pod: `m-${role}-${replica}`,
  endpoint: `127.0.0.1:${40_000 + replica + (role === "decode" ? 100 : 0)}`,
  ready: true,
  entry: true,
  revision: "r1",
  ...fields,
});

/** Collects the lists handed over; `next(predicate)` resolves with the first one that satisfies it. */
function lists() {
  const seen: EndpointSpec[][] = [];
  const waiters: { test: (l: EndpointSpec[]) => boolean; resolve: (l: EndpointSpec[]) => void }[] = [];
  return {
    seen,
    onChange: (list: EndpointSpec[]) => {
      seen.push(list);
      for (const w of [...waiters])
        if (w.test(list)) waiters.splice(waiters.indexOf(w), 1) && w.resolve(list);
    },
    next: (test: (l: EndpointSpec[]) => boolean) =>
      new Promise<EndpointSpec[]>((resolve) => {
        const found = seen.find(test);
        if (found) resolve(found);
        else waiters.push({ test, resolve });
      }),
  };
}

describe("Kubernetes discovery (dev cluster API server)", () => {
  let cluster: DevCluster;
  let client: HttpsKubeClient;

  before(async () => {
    cluster = await startDevCluster();
    client = cluster.client("tessera-operator");
  });
  after(() => cluster.close());

  const writeStatus = (name: string, shards: Shard[]) =>
    client.apply(
      INFERENCE_MODELS,
      "default",
      { apiVersion: API_VERSION, kind: "InferenceModel", metadata: { name }, status: { shards } },
      { subresource: "status", force: true },
    );
  const createModel = (name: string) =>
    client.apply(INFERENCE_MODELS, "default", {
      apiVersion: API_VERSION,
      kind: "InferenceModel",
      metadata: { name },
      spec: { model: { path: "/models/tiny" } },
    });

  it("hands over the model's ready entry shards with their roles, following every status change", async () => {
    const discovery = new KubernetesDiscovery(
      { namespace: "default", inferenceModel: "m", kubeconfig: cluster.kubeconfig },
      { log, env: {} },
    );
    const got = lists();
    await discovery.start(got.onChange);
    assert.deepEqual([...got.seen], [[]], "no such model yet: no endpoint");
    await createModel("m");
    await createModel("other");
    await writeStatus("other", [shard("both", 0)]);
    await writeStatus("m", [shard("prefill", 0), shard("decode", 0), shard("decode", 1, { ready: false })]);
    const first = await got.next((l) => l.length > 0);
    assert.deepEqual(first, [
      { name: "m-decode-0", address: "127.0.0.1:40100", role: "decode" },
      { name: "m-prefill-0", address: "127.0.0.1:40000", role: "prefill" },
    ]);
    await writeStatus("m", [shard("prefill", 0), shard("decode", 0), shard("decode", 1)]);
    assert.equal((await got.next((l) => l.length === 3)).length, 3);
    await client.delete(INFERENCE_MODELS, "default", "m");
    await got.next((l) => l.length === 0 && got.seen.indexOf(l) > 0);
    assert.ok(
      got.seen.every((l) => l.every((s) => s.name.startsWith("m-"))),
      "another model's shards are not ours",
    );
    await discovery.stop();
  });

  it("refuses to start without a cluster to talk to, or one that does not answer", async () => {
    const home = mkdtempSync(path.join(os.tmpdir(), "tessera-home-"));
    try {
      const none = new KubernetesDiscovery(
        { namespace: "default", inferenceModel: "m" },
        { log, env: { HOME: home } },
      );
      await assert.rejects(
        none.start(() => {}),
        (err: TesseraError) => err.code === Code.INVALID_ARGUMENT,
      );
      const file = path.join(home, "kubeconfig");
      writeFileSync(file, cluster.server.kubeconfig().replace(/https:\/\/[^\s"]+/, "https://127.0.0.1:1"));
      const down = new KubernetesDiscovery(
        { namespace: "default", inferenceModel: "m", kubeconfig: file },
        { log, env: {} },
      );
      await assert.rejects(
        down.start(() => {}),
        (err: TesseraError) => {
          assert.equal(err.code, Code.UNAVAILABLE);
          assert.match(err.message, /cannot list InferenceModels in namespace default/);
          return true;
        },
      );
      await down.stop();
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  it("a router with Kubernetes discovery follows the shards in its pool, roles included", async () => {
    await createModel("routed");
    await writeStatus("routed", [shard("both", 0, { pod: "routed-both-0" })]);
    const config = routerConfigSchema.parse({
      grpcPort: 0,
      httpPort: 0,
      models: [{ id: "tiny", tokenizer }],
      discovery: { type: "kubernetes", inferenceModel: "routed", kubeconfig: cluster.kubeconfig },
      health: { watch: false, loadPollMs: 0 },
    });
    const router = await startRouter(config, log);
    try {
      const names = () => router.pool.endpoints.map((e) => `${e.name}:${e.role}`).sort();
      assert.deepEqual(names(), ["routed-both-0:both"]);
      await writeStatus("routed", [
        shard("prefill", 0, { pod: "routed-prefill-0" }),
        shard("decode", 0, { pod: "routed-decode-0" }),
      ]);
      for (let i = 0; i < 200 && names().length !== 2; i++) await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(names(), ["routed-decode-0:decode", "routed-prefill-0:prefill"]);
    } finally {
      await router.stop(0);
    }
  });
});
