import assert from "node:assert/strict";
import { ROUTING_STRATEGIES } from "../../services/api/inference-model-spec.ts";
import { parseRouterConfig } from "../../services/router/config/router-config.ts";
import { MODEL_REF, modelSpec } from "../testing/fixtures.ts";
import { routerConfig, routingPipeline } from "./router-config.ts";

describe("router config from spec.routing", () => {
  it("turns the default routing into consistent hashing with its epsilon and prefix blocks", () => {
    assert.deepEqual(routingPipeline(modelSpec().routing), {
      prefixBlocks: 8,
      sessionHeader: "x-session-id",
      scorers: [{ type: "consistent-hash", weight: 1, epsilon: 0.25 }],
      picker: { type: "max-score" },
    });
  });

  it("adds the load and latency scorers with their weights, and drops weights of 0", () => {
    const spec = modelSpec({
      routing: {
        weights: { prefix: 2, load: 0.5, latency: 0.25 },
        epsilon: 0.5,
        prefixBlocks: 4,
        sessionHeader: "x-tenant-session",
      },
    });
    assert.deepEqual(routingPipeline(spec.routing), {
      prefixBlocks: 4,
      sessionHeader: "x-tenant-session",
      scorers: [
        { type: "consistent-hash", weight: 2, epsilon: 0.5 },
        { type: "load", weight: 0.5 },
        { type: "least-latency", weight: 0.25 },
      ],
      picker: { type: "max-score" },
    });
    const noPrefix = modelSpec({ routing: { weights: { prefix: 0, load: 1 } } });
    assert.deepEqual(routingPipeline(noPrefix.routing).scorers, [{ type: "load", weight: 1 }]);
  });

  it("maps each other strategy to its scorer and picker", () => {
    const pipeline = (strategy: (typeof ROUTING_STRATEGIES)[number]) => {
      const { scorers, picker } = routingPipeline(modelSpec({ routing: { strategy } }).routing);
      return [scorers.map((s) => s.type).join("+"), picker.type];
    };
    assert.deepEqual(pipeline("least-load"), ["load", "max-score"]);
    assert.deepEqual(pipeline("least-latency"), ["least-latency", "max-score"]);
    assert.deepEqual(pipeline("round-robin"), ["", "round-robin"]);
    assert.deepEqual(pipeline("random"), ["", "random"]);
    assert.deepEqual(pipeline("power-of-two"), ["load", "power-of-two"]);
  });

  it("is a config the router accepts, for every strategy: this model, its tokenizer, Kubernetes discovery", () => {
    for (const strategy of ROUTING_STRATEGIES) {
      const spec = modelSpec({ routing: { strategy, weights: { load: 1, latency: 1 } } });
      const parsed = parseRouterConfig(routerConfig(MODEL_REF, spec), "/");
      assert.equal(parsed.error, undefined, `${strategy}: ${parsed.error?.message}`);
      const config = parsed.value!;
      assert.deepEqual(config.models, [{ id: "tiny", tokenizer: "/models/tiny" }]);
      assert.deepEqual(config.discovery, { type: "kubernetes", namespace: "ml", inferenceModel: "tiny" });
      assert.deepEqual([config.grpcPort, config.httpPort, config.metricsPort], [50050, 8080, 9090]);
    }
  });

  it("shares the response cache in the KV store under the model's key prefix, password from its Secret", () => {
    assert.equal(routerConfig(MODEL_REF, modelSpec())["cache"], undefined, "no store, in-process only");
    const spec = modelSpec({
      kvTransfer: { redis: { address: "redis.ml:6379", db: 2, passwordSecret: { name: "kv", key: "pw" } } },
    });
    const parsed = parseRouterConfig(routerConfig(MODEL_REF, spec), "/");
    assert.equal(parsed.error, undefined, parsed.error?.message);
    assert.deepEqual(parsed.value?.cache.redis, {
      url: "redis://redis.ml:6379/2",
      keyPrefix: "tessera:kv:ml:tiny:router-cache:",
      timeoutMs: 50,
      passwordEnv: "TESSERA_CACHE_REDIS_PASSWORD",
    });
    assert.equal(parsed.value?.cache.enabled, true);
    const open = modelSpec({ kvTransfer: { redis: { address: "redis.ml:6379" } } });
    const redis = routerConfig(MODEL_REF, open)["cache"] as { redis: Record<string, unknown> };
    assert.equal(redis.redis["passwordEnv"], undefined);
  });

  it("authenticates with the keys file of routing.apiKeysSecret, where the pod mounts it", () => {
    assert.equal(routerConfig(MODEL_REF, modelSpec())["admission"], undefined, "no keys: open");
    const spec = modelSpec({ routing: { apiKeysSecret: { name: "keys" } } });
    const parsed = parseRouterConfig(routerConfig(MODEL_REF, spec), "/");
    assert.equal(parsed.error, undefined, parsed.error?.message);
    assert.equal(parsed.value?.admission.apiKeysFile, "/etc/tessera/api-keys/api-keys.yaml");
  });

  it("uses the served name as the model id, and the checkpoint under /models with a PVC", () => {
    const spec = modelSpec({
      model: { path: "llama/8b", pvc: { claimName: "weights" }, servedName: "llama" },
    });
    assert.deepEqual(routerConfig(MODEL_REF, spec)["models"], [
      { id: "llama", tokenizer: "/models/llama/8b" },
    ]);
  });
});
