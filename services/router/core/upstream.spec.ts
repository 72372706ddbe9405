import assert from "node:assert/strict";
import { status } from "@grpc/grpc-js";
import { FinishReason } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import type { EndpointSpec } from "../endpoints/endpoint.ts";
import { EndpointPool } from "../endpoints/endpoint-pool.ts";
import { ModelRegistry } from "../models/model-registry.ts";
import { createPlugins, routingConfigSchema } from "../routing/routing-config.ts";
import { RoutingPipeline } from "../routing/routing-pipeline.ts";
import { pluginContext } from "../testing/candidates.ts";
import { testModel, workerInfo } from "../testing/models.ts";
import { ScriptedWorker } from "../testing/scripted-worker.ts";
import { EndpointSelector } from "./endpoint-selector.ts";
import { Flight } from "./flight.ts";
import { prepareRequest } from "./prepare-request.ts";
import type { RouterEvent } from "./router-events.ts";
import { upstream } from "./upstream.ts";

const info = { ...workerInfo, maxContext: 512 };
const model = testModel();
model.info = info;
const { tokenizer } = model;
const script = tokenizer.encode(
  "Once upon a time, a router carried every token of a story from one worker to the next, and when a worker fell silent the story went on without a gap or a repeat, until the very end of the tale.",
  { addSpecialTokens: false },
);
const PROMPT = script.slice(0, 40);
/** What a single worker would generate after PROMPT. */
const story = (n: number) =>
  Array.from({ length: n }, (_, i) => script[(PROMPT.length + i) % script.length]!);
const log = createLogger("test", "silent");

interface Fleet {
  pool: EndpointPool;
  selector: EndpointSelector;
  workers: Map<string, ScriptedWorker>;
}

async function fleet(roles: Record<string, EndpointSpec["role"]>): Promise<Fleet> {
  const workers = new Map<string, ScriptedWorker>();
  for (const name of Object.keys(roles))
    workers.set(name, await ScriptedWorker.start({ modelId: model.id, info, script }));
  let reported: () => void = () => {};
  const allReported = new Promise<void>((resolve) => {
    reported = resolve;
  });
  const pool: EndpointPool = new EndpointPool({
    clock: { now: () => Date.now(), setTimer: () => () => {} },
    log,
    endpoint: {
      clock: { now: () => Date.now(), setTimer: () => () => {} },
      outliers: { consecutiveFailures: 100, baseEjectionMs: 1_000, maxEjectionMs: 1_000 },
      latencyHalfLifeMs: 1_000,
      maxLoadAgeMs: 1_000,
    },
    health: { watch: false, service: "", kvService: "kv", reconnect: { initialMs: 100, maxMs: 100 } },
    loadPollMs: 0,
    onChange: () => {
      if (pool?.endpoints.every((e) => e.models !== undefined)) reported();
    },
  });
  pool.update(
    Object.entries(roles).map(([name, role]) => ({ name, address: workers.get(name)!.address, role })),
  );
  await allReported;
  const plugins = createPlugins(routingConfigSchema.parse({}), pluginContext());
  return { pool, selector: new EndpointSelector(pool, new RoutingPipeline(plugins.value!), 64), workers };
}

function close(f: Fleet): void {
  f.pool.close();
  for (const w of f.workers.values()) w.close();
}

async function run(
  f: Fleet,
  sampling: Record<string, unknown>,
  maxMigrations = 2,
  priority?: number,
): Promise<{
  served: Flight["served"];
  events: RouterEvent[];
  error: Code | undefined;
  ids: number[];
  text: string;
}> {
  const prepared = prepareRequest(
    { requestId: "r1", model: "", prompt: { type: "tokens", ids: PROMPT }, sampling, priority },
    new ModelRegistry([model]),
    { prefixBlocks: 4 },
  );
  const flight: Flight = new Flight(
    upstream(prepared.value!, {
      selector: f.selector,
      maxAttempts: 3,
      maxMigrations,
      deadline: undefined,
      metrics: undefined,
      log,
    }),
  );
  await flight.settled;
  const events = flight.events;
  return {
    served: flight.served,
    events,
    error: flight.error?.code,
    ids: events.flatMap((e) => (e.type === "tokens" ? e.tokens.map((t) => t.tokenId) : [])),
    text: events.map((e) => e.text).join(""),
  };
}

const decodeRequests = (f: Fleet) =>
  [...f.workers].filter(([n]) => n.startsWith("d")).flatMap(([, w]) => w.requests);

describe("upstream: disaggregated serving and migration (scripted workers)", () => {
  let f: Fleet;
  afterEach(() => close(f));

  it("streams the prefill token, then the decode worker's continuation, as one generation", async () => {
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    const out = await run(f, { maxTokens: 12 });
    assert.equal(out.error, undefined);
    assert.deepEqual(out.ids, story(12));
    assert.equal(out.text, tokenizer.decode(story(12)));
    assert.deepEqual(out.events.at(-1), {
      type: "finish",
      reason: FinishReason.LENGTH,
      usage: { promptTokens: 40, completionTokens: 12 },
      text: "",
    });
    const [prefill] = f.workers.get("p0")!.requests;
    assert.equal(prefill?.sampling?.maxTokens, 1);
    assert.equal(prefill?.kv?.awaitWrites, true);
    const [decode, ...more] = decodeRequests(f);
    assert.equal(more.length, 0);
    assert.deepEqual(decode?.prompt.value, {
      $typeName: "tessera.v1.TokenIds",
      ids: [...PROMPT, story(1)[0]],
    });
    assert.equal(decode?.sampling?.maxTokens, 11);
    assert.equal(decode?.kv?.expectedRemoteBlocks, 2, "the prompt's full blocks, stored by the prefill");
  });

  it("names every endpoint that served a disaggregated request, and the path, and sums the workers' times", async () => {
    f = await fleet({ p0: "prefill", d0: "decode" });
    const out = await run(f, { maxTokens: 6 });
    assert.deepEqual(out.served, {
      path: "disaggregated",
      endpoints: [
        { name: "p0", part: "prefill" },
        { name: "d0", part: "decode" },
      ],
      workerMs: 14,
    });
  });

  it("goes on on the prefill worker when it could not store the prompt's blocks (one KV deadline, not two)", async () => {
    f = await fleet({ p0: "prefill", d0: "decode" });
    f.workers.get("p0")!.kvWritesFail = true;
    const out = await run(f, { maxTokens: 10 });
    assert.equal(out.error, undefined);
    assert.deepEqual(out.ids, story(10));
    assert.deepEqual(decodeRequests(f), [], "the decode worker, which would wait for Redis, was not asked");
    const [prefill, rest] = f.workers.get("p0")!.requests;
    assert.equal(rest?.kv?.expectedRemoteBlocks, 0, "its own cache holds the prompt's blocks");
    assert.equal(prefill?.kv?.awaitWrites, true);
    assert.deepEqual(out.served, {
      path: "fallback",
      reason: "kv_write_failed",
      endpoints: [
        { name: "p0", part: "prefill" },
        { name: "p0", part: "decode" },
      ],
      workerMs: 14,
    });
  });

  it("resumes a decode stream that fails mid-way on another decode worker: no gap, no duplicate", async () => {
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    for (const name of ["d0", "d1"]) f.workers.get(name)!.failAfter = 5;
    const out = await run(f, { maxTokens: 10 });
    assert.equal(out.error, undefined);
    assert.deepEqual(out.ids, story(10));
    assert.equal(out.text, tokenizer.decode(story(10)));
    const [first, second] = decodeRequests(f);
    const resumed = second?.prompt.case === "tokenIds" ? second.prompt.value.ids : [];
    assert.deepEqual(resumed, [...PROMPT, ...story(6)], "the prompt and the 6 tokens streamed");
    assert.equal(second?.sampling?.maxTokens, 4);
    assert.notEqual(first, undefined);
  });

  it("sends a request's priority (a batch line's) to every worker of every segment", async () => {
    const prioritiesOf = () => [...f.workers.values()].flatMap((w) => w.requests).map((r) => r.priority);
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    f.workers.get("d0")!.failAfter = 5;
    f.workers.get("d1")!.failAfter = 5;
    assert.equal((await run(f, { maxTokens: 10 }, 2, 10)).error, undefined);
    assert.deepEqual(prioritiesOf(), [10, 10, 10], "prefill, decode, and the decode it migrated to");
    close(f);
    f = await fleet({ p0: "prefill", d0: "decode" });
    assert.equal((await run(f, { maxTokens: 4 })).error, undefined);
    assert.deepEqual(prioritiesOf(), [0, 0], "interactive requests keep the default");
  });

  it("gives every segment of a sampled request one seed: the client's, or one drawn for the request", async () => {
    // Workers draw a token from (seed, position): with one seed the segments sample what one worker would.
    const seedsOf = () => [...f.workers.values()].flatMap((w) => w.requests).map((r) => r.sampling?.seed);
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    for (const name of ["d0", "d1"]) f.workers.get(name)!.failAfter = 5;
    assert.equal((await run(f, { maxTokens: 10, temperature: 0.8, seed: 77 })).error, undefined);
    assert.deepEqual(seedsOf(), [77n, 77n, 77n], "prefill, decode, and the decode it migrated to");

    close(f);
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    for (const name of ["d0", "d1"]) f.workers.get(name)!.failAfter = 5;
    assert.equal((await run(f, { maxTokens: 10, temperature: 0.8 })).error, undefined);
    const drawn = seedsOf();
    assert.equal(drawn.length, 3);
    assert.equal(typeof drawn[0], "bigint");
    assert.deepEqual(new Set(drawn).size, 1, `one seed for the request: ${drawn}`);
  });

  it("honours a stop string that straddles the point where another worker took over", async () => {
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    for (const name of ["d0", "d1"]) f.workers.get(name)!.failAfter = 5;
    const ids = story(20);
    const upToResume = tokenizer.decode(ids.slice(0, 6));
    const stop = tokenizer.decode(ids.slice(0, 8)).slice(upToResume.length - 3);
    assert.equal(
      tokenizer.decode(ids).indexOf(stop),
      upToResume.length - 3,
      "the stop string first appears there",
    );
    const out = await run(f, { maxTokens: 20, stop: [stop] });
    assert.equal(out.error, undefined);
    assert.equal(out.text, upToResume.slice(0, -3));
    assert.deepEqual(out.ids, ids.slice(0, 8));
    const last = out.events.at(-1);
    assert.equal(last?.type === "finish" && last.reason, FinishReason.STOP_STRING);
    assert.equal(last?.type === "finish" && last.usage.completionTokens, 8);
  });

  it("gives up after maxMigrations, with every token streamed once", async () => {
    f = await fleet({ p0: "prefill", d0: "decode", d1: "decode" });
    for (const name of ["d0", "d1"]) f.workers.get(name)!.failAfter = 1;
    const out = await run(f, { maxTokens: 20 }, 2);
    assert.equal(out.error, Code.UNAVAILABLE);
    assert.deepEqual(out.ids, story(4), "prefill 1 + three decode segments of 1");
  });

  it("falls back to a whole generation on a decode worker when no prefill worker answers", async () => {
    f = await fleet({ p0: "prefill", d0: "decode" });
    f.workers.get("p0")!.failAfter = 0;
    const out = await run(f, { maxTokens: 6 });
    assert.equal(out.error, undefined);
    assert.deepEqual(out.ids, story(6));
    assert.equal(decodeRequests(f)[0]?.kv, undefined, "asked for the whole generation");
  });

  it("serves a request whose penalties depend on its own output whole, on one worker", async () => {
    f = await fleet({ p0: "prefill", d0: "decode" });
    const out = await run(f, { maxTokens: 6, presencePenalty: 0.5 });
    assert.deepEqual(out.ids, story(6));
    assert.equal(f.workers.get("p0")!.requests.length, 0);
    assert.equal(decodeRequests(f)[0]?.kv, undefined);
  });

  it("ends a stream whose deadline passed mid-way with DEADLINE_EXCEEDED, not as an endpoint failure", async () => {
    f = await fleet({ c0: "both", c1: "both" });
    for (const e of f.pool.endpoints) e.kvHealth = "SERVING";
    for (const w of f.workers.values()) {
      w.failAfter = 3;
      w.failWith = status.DEADLINE_EXCEEDED;
    }
    const out = await run(f, { maxTokens: 8 });
    assert.equal(out.error, Code.DEADLINE_EXCEEDED);
    assert.deepEqual(out.ids, story(3), "not resumed elsewhere");
  });

  it("colocated: ends with UNAVAILABLE mid-stream without a KV tier, resumes with one", async () => {
    f = await fleet({ c0: "both", c1: "both" });
    for (const w of f.workers.values()) w.failAfter = 3;
    const without = await run(f, { maxTokens: 8 });
    assert.equal(without.error, Code.UNAVAILABLE);
    assert.deepEqual(without.ids, story(3));
    for (const e of f.pool.endpoints) e.kvHealth = "SERVING";
    for (const w of f.workers.values()) w.failAfter = 5;
    const withKv = await run(f, { maxTokens: 8 });
    assert.equal(withKv.error, undefined);
    assert.deepEqual(withKv.ids, story(8));
  });
});
