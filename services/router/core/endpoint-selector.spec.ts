import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { ModelInfoSchema } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { createLogger } from "../../kernel/log.ts";
import { ManualClock } from "../../kernel/manual-clock.ts";
import { EndpointPool } from "../endpoints/endpoint-pool.ts";
import { createPlugins, routingConfigSchema } from "../routing/routing-config.ts";
import { RoutingPipeline } from "../routing/routing-pipeline.ts";
import { pluginContext } from "../testing/candidates.ts";
import { testModel, workerInfo } from "../testing/models.ts";
import { DECODE_POOL, EndpointSelector, type PoolChoice, PREFILL_POOL } from "./endpoint-selector.ts";
import type { PreparedRequest } from "./router-request.ts";

const BOTH: PoolChoice = { role: "both", kv: false };

describe("EndpointSelector", () => {
  const clock = new ManualClock();
  let pool: EndpointPool;
  let selector: EndpointSelector;

  beforeEach(() => {
    pool = new EndpointPool({
      clock,
      log: createLogger("test", "silent"),
      endpoint: {
        clock,
        outliers: { consecutiveFailures: 1, baseEjectionMs: 1_000, maxEjectionMs: 1_000 },
        latencyHalfLifeMs: 1_000,
        maxLoadAgeMs: 1_000,
      },
      health: { watch: false, service: "", kvService: "kv", reconnect: { initialMs: 1_000, maxMs: 1_000 } },
      loadPollMs: 0,
      onChange: () => {},
    });
    // Nothing listens there: the endpoints only need names; their models are set by hand.
    pool.update(["a", "b", "c"].map((name, i) => ({ name, address: `127.0.0.1:${9 + i}` })));
    for (const e of pool.endpoints) e.models = [create(ModelInfoSchema, { id: "tiny" })];
    const plugins = createPlugins(routingConfigSchema.parse({}), pluginContext());
    selector = new EndpointSelector(pool, new RoutingPipeline(plugins.value!), 64);
  });

  afterEach(() => pool.close());

  const prepared = (position: number): PreparedRequest => ({
    request: { requestId: "r", model: "", prompt: { type: "tokens", ids: [1] }, sampling: {} },
    model: testModel(),
    info: workerInfo,
    promptIds: [1],
    sampling: {} as PreparedRequest["sampling"],
    key: { position, source: "prompt", blockHashes: [] },
  });

  it("picks the key's home, then the next on the ring when it was tried or is ejected", () => {
    const ring = selector.ring("tiny");
    const order = ring.walk(12_345);
    assert.equal(selector.select(prepared(12_345), new Set(), BOTH)?.endpoint.name, order[0]);
    assert.equal(selector.select(prepared(12_345), new Set([order[0]!]), BOTH)?.endpoint.name, order[1]);
    pool.get(order[0]!)!.outliers.recordFailure();
    assert.equal(selector.select(prepared(12_345), new Set(), BOTH)?.endpoint.name, order[1]);
    assert.equal(selector.select(prepared(12_345), new Set(order), BOTH), undefined);
  });

  it("keeps the ring when health changes, and rebuilds it when the endpoints serving the model change", () => {
    const ring = selector.ring("tiny");
    pool.get("a")!.health = "NOT_SERVING";
    assert.equal(selector.ring("tiny"), ring);
    assert.deepEqual(
      selector
        .eligible("tiny")
        .map((e) => e.name)
        .sort(),
      ["b", "c"],
    );
    pool.update([{ name: "a", address: "127.0.0.1:9" }]);
    assert.notEqual(selector.ring("tiny"), ring);
    assert.deepEqual(selector.ring("tiny").members, ["a"]);
  });

  it("routes disaggregated only with prefill and decode endpoints that have a working KV tier, else says why", () => {
    pool.update([
      { name: "p0", address: "127.0.0.1:20", role: "prefill" },
      { name: "d0", address: "127.0.0.1:21", role: "decode" },
      { name: "d1", address: "127.0.0.1:22", role: "decode" },
    ]);
    for (const e of pool.endpoints) e.models = [create(ModelInfoSchema, { id: "tiny" })];
    assert.deepEqual(selector.route("tiny", true), { type: "disaggregated" });
    assert.deepEqual(selector.route("tiny", false), {
      type: "colocated",
      pool: { role: "decode", kv: false },
      fallback: "sampling",
    });
    for (const e of pool.endpoints) if (e.role === "decode") e.kvHealth = "NOT_SERVING";
    const route = selector.route("tiny", true);
    assert.equal(route.type, "colocated", "no decode endpoint can read the KV");
    assert.equal(route.type === "colocated" && route.fallback, "kv_unavailable");
    for (const e of pool.endpoints) if (e.role === "decode") e.health = "NOT_SERVING";
    const noDecode = selector.route("tiny", true);
    assert.equal(noDecode.type === "colocated" && noDecode.fallback, "no_decode_endpoint");
    pool.update([{ name: "b0", address: "127.0.0.1:23" }]);
    for (const e of pool.endpoints) e.models = [create(ModelInfoSchema, { id: "tiny" })];
    assert.deepEqual(selector.route("tiny", true), { type: "colocated", pool: { role: "both", kv: false } });
  });

  it("keeps a ring per role, so both sides of a request are prefix-affine", () => {
    pool.update([
      ...["p0", "p1", "p2"].map((name, i) => ({
        name,
        address: `127.0.0.1:${30 + i}`,
        role: "prefill" as const,
      })),
      ...["d0", "d1", "d2"].map((name, i) => ({
        name,
        address: `127.0.0.1:${40 + i}`,
        role: "decode" as const,
      })),
    ]);
    for (const e of pool.endpoints) e.models = [create(ModelInfoSchema, { id: "tiny" })];
    assert.deepEqual(selector.ring("tiny", "prefill").members.toSorted(), ["p0", "p1", "p2"]);
    const decodeHome = selector.ring("tiny", "decode").walk(777)[0];
    assert.equal(selector.select(prepared(777), new Set(), DECODE_POOL)?.endpoint.name, decodeHome);
    assert.equal(
      selector.select(prepared(777), new Set(), PREFILL_POOL)?.endpoint.name,
      selector.ring("tiny", "prefill").walk(777)[0],
    );
    pool.get(decodeHome!)!.kvHealth = "NOT_SERVING";
    const next = selector.select(prepared(777), new Set(), DECODE_POOL)?.endpoint.name;
    assert.notEqual(next, decodeHome, "an endpoint with a working KV tier comes first");
    for (const e of pool.endpoints) e.kvHealth = "NOT_SERVING";
    assert.equal(
      selector.select(prepared(777), new Set(), DECODE_POOL)?.endpoint.name,
      decodeHome,
      "without any, the ring decides",
    );
  });
});
