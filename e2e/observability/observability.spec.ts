// Observability of a live local deployment (Redis, two workers, a router with one failing endpoint,
// an operator; see live-stack.ts) with real tools: promtool checks every component's /metrics; one
// request's trace holds every stage it went through (router -> worker -> queue, prefill, KV transfer,
// decode), and a disaggregated request sent to a router holds the router's span, its call to the
// prefill worker with that worker's stages and its call to the decode worker with that worker's stages; a real Prometheus scraping the components under load answers every query of every Grafana
// dashboard with data, from metrics that exist, and evaluates the chart's alert rules without error.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import path from "node:path";
import { Metadata } from "@grpc/grpc-js";
import { stringify } from "yaml";
import { type GenerateResponse, Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { eventually } from "../devcluster/kubelet-fixture.ts";
import { CHART, must, render } from "../helm/chart-tool.ts";
import { dashboardQueries, variableQueries } from "./dashboard-queries.ts";
import { type LiveStack, startLiveStack } from "./live-stack.ts";
import type { ReceivedSpan } from "./otlp-receiver.ts";
import { type PrometheusServer, startPrometheus } from "./prometheus-server.ts";

function promtoolCheckMetrics(text: string): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    const child = execFile("promtool", ["check", "metrics"], (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, output: stdout + stderr }),
    );
    child.stdin?.end(text);
  });
}

const traceparent = () => {
  const traceId = randomBytes(16).toString("hex");
  const spanId = randomBytes(8).toString("hex");
  return { traceId, spanId, header: `00-${traceId}-${spanId}-01` };
};

async function generate(
  client: GrpcClient,
  request: Parameters<typeof generateMessage>[0],
  metadata?: Metadata,
) {
  const stream = client.serverStream(Inference.method.generate, generateMessage(request), {}, metadata);
  const ids: number[] = [];
  for await (const message of stream as AsyncIterable<GenerateResponse>)
    ids.push(...message.tokens.map((t) => t.tokenId));
  return ids;
}

function generateMessage(r: {
  prompt: number[];
  maxTokens: number;
  requestId?: string;
  kv?: object;
  model?: string;
}) {
  return {
    ...(r.model && { model: r.model }),
    prompt: { case: "tokenIds" as const, value: { ids: r.prompt } },
    sampling: { maxTokens: r.maxTokens, ignoreEos: true },
    ...(r.requestId && { requestId: r.requestId }),
    ...(r.kv && { kv: r.kv }),
  };
}

const prompt = (seed: number, n: number) =>
  Array.from({ length: n }, (_, i) => 3 + ((seed * 131 + i * 37) % 500));

describe("observability of a live deployment: promtool, traces, dashboards on a real Prometheus (e2e)", function () {
  this.timeout(120_000);
  let stack: LiveStack;
  let prometheus: PrometheusServer;
  let router: GrpcClient;
  const metricsTargets = () => ({
    router: stack.router.metricsAddress,
    "worker-0": stack.workerMetrics[0] ?? "",
    "worker-1": stack.workerMetrics[1] ?? "",
    operator: `127.0.0.1:${stack.operator.metricsPort}`,
  });

  before(async () => {
    stack = await startLiveStack();
    router = new GrpcClient(stack.router.grpcAddress);
    const rule = must(await render("--set", "monitoring.prometheusRule.enabled=true"), "PrometheusRule");
    const targets = metricsTargets();
    prometheus = await startPrometheus(
      [
        { job: "tessera-router", targets: [targets.router] },
        { job: "tessera-workers", targets: [targets["worker-0"], targets["worker-1"]] },
        { job: "tessera-operator", targets: [targets.operator] },
      ],
      { "tessera-rules.yaml": stringify(rule["spec"]) },
    );
  });
  after(async () => {
    router?.close();
    await prometheus?.stop();
    await stack?.close();
  });

  it("every component's /metrics passes promtool check metrics", async () => {
    for (const [component, address] of Object.entries(metricsTargets())) {
      const text = await (await fetch(`http://${address}/metrics`)).text();
      assert.match(text, /^# TYPE tessera_/m, component);
      const result = await promtoolCheckMetrics(text);
      assert.equal(result.code, 0, `${component}: ${result.output}`);
      assert.equal(result.output.trim(), "", `${component}: ${result.output}`);
    }
  });

  it("one trace holds a routed request's stages: router (HTTP), router -> worker call, queue, prefill, KV transfer, decode", async () => {
    const parent = traceparent();
    const response = await fetch(`${stack.router.httpUrl}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json", traceparent: parent.header },
      body: JSON.stringify({
        model: "tiny-llama",
        prompt: "The history of the trace ".repeat(4),
        max_tokens: 6,
        ignore_eos: true,
      }),
    });
    assert.equal(response.status, 200, await response.clone().text());
    const requestId = ((await response.json()) as { id: string }).id.replace(/^cmpl-/, "");
    const want = [
      "router POST /v1/completions",
      "tessera.v1.Inference/Generate",
      "worker tessera.v1.Inference/Generate",
    ];
    const phases = ["kv_transfer.read", "queue", "prefill", "decode", "kv_transfer.write"];
    const spans = await eventually("the trace's spans at the receiver", () => {
      const found = stack.receiver.spans.filter((s) => s.traceId === parent.traceId);
      return [...want, ...phases].every((n) => found.some((s) => s.name === n)) && found;
    });
    const byName = (name: string) => spans.find((s) => s.name === name) as ReceivedSpan;
    const httpSpan = byName("router POST /v1/completions");
    const workerSpan = byName("worker tessera.v1.Inference/Generate");
    // The router's calls: one, or two when the first went to the failing endpoint and was retried.
    const calls = spans.filter((s) => s.name === "tessera.v1.Inference/Generate");
    const clientSpan = calls.find((s) => s.spanId === workerSpan.parentSpanId) as ReceivedSpan;
    assert.equal(httpSpan.parentSpanId, parent.spanId);
    assert.equal(httpSpan.service, "tessera-router");
    assert.ok(
      clientSpan,
      "the trace context crossed gRPC metadata: the worker's span is a router call's child",
    );
    for (const call of calls) assert.equal(call.parentSpanId, httpSpan.spanId);
    assert.equal(workerSpan.service, "tessera-worker");
    for (const phase of phases) assert.equal(byName(phase).parentSpanId, workerSpan.spanId, phase);
    for (const span of spans) assert.equal(span.attributes["tessera.request_id"], requestId, span.name);
    const [queue, prefill, decode] = ["queue", "prefill", "decode"].map(byName) as ReceivedSpan[];
    assert.ok(
      queue!.endNs <= prefill!.startNs + 1_000_000n && prefill!.endNs <= decode!.startNs + 1_000_000n,
    );
    assert.ok(workerSpan.startNs >= clientSpan.startNs && httpSpan.endNs >= clientSpan.endNs);
  });

  it("one trace holds every stage of a disaggregated request: router, router -> prefill worker (queue, prefill, KV write), router -> decode worker (KV read, queue, decode)", async () => {
    // A client request to the disaggregated router (worker 0 prefill, worker 1 decode, Redis between
    // them). Ready means every endpoint has said whether its Redis tier serves.
    await eventually(
      "the disaggregated router ready",
      async () => (await fetch(`${stack.disaggRouter.httpUrl}/ready`).catch(() => undefined))?.ok === true,
    );
    const parent = traceparent();
    const metadata = new Metadata();
    metadata.set("traceparent", parent.header);
    const client = new GrpcClient(stack.disaggRouter.grpcAddress);
    const requestId = "disagg-trace-1";
    const p = prompt(11, 90);
    try {
      const ids = await generate(
        client,
        { prompt: p, maxTokens: 6, requestId, model: "tiny-llama" },
        metadata,
      );
      assert.equal(ids.length, 6);
    } finally {
      client.close();
    }
    const spans = await eventually("every stage's span at the receiver", () => {
      const found = stack.receiver.spans.filter((s) => s.traceId === parent.traceId);
      const servers = found.filter((s) => s.name === "worker tessera.v1.Inference/Generate");
      return (
        found.some((s) => s.name === "router tessera.v1.Inference/Generate") &&
        servers.length === 2 &&
        found.filter((s) => s.name === "tessera.v1.Inference/Generate").length === 2 &&
        found.filter((s) => s.name === "decode").length === 1 &&
        found.some((s) => s.name === "kv_transfer.write") &&
        found.filter((s) => servers.some((w) => w.spanId === s.parentSpanId)).length >= 7 &&
        found
      );
    });
    const requestSpan = spans.find((s) => s.name === "router tessera.v1.Inference/Generate") as ReceivedSpan;
    assert.equal(requestSpan.service, "tessera-router");
    assert.equal(requestSpan.parentSpanId, parent.spanId, "the router's span continues the client's trace");
    // The router's two calls, children of its request span: prefill first, then decode.
    const calls = spans
      .filter((s) => s.name === "tessera.v1.Inference/Generate")
      .sort((x, y) => Number(x.startNs - y.startNs));
    assert.equal(calls.length, 2);
    for (const call of calls) {
      assert.equal(call.service, "tessera-router");
      assert.equal(call.parentSpanId, requestSpan.spanId);
    }
    const [prefillClient, decodeClient] = calls as [ReceivedSpan, ReceivedSpan];
    assert.ok(prefillClient.endNs <= decodeClient.startNs + 1_000_000n, "prefill call, then decode call");
    // Each worker's SERVER span is the child of the router's call to it.
    const serverUnder = (call: ReceivedSpan) => {
      const server = spans.find(
        (s) => s.name === "worker tessera.v1.Inference/Generate" && s.parentSpanId === call.spanId,
      );
      assert.ok(server, `a worker span under the router's call ${call.spanId}`);
      assert.equal(server.service, "tessera-worker");
      return server;
    };
    const prefillServer = serverUnder(prefillClient);
    const decodeServer = serverUnder(decodeClient);
    const under = (server: ReceivedSpan) =>
      spans
        .filter((s) => s.parentSpanId === server.spanId)
        .sort((x, y) => Number(x.startNs - y.startNs))
        .map((s) => s.name);
    // The prefill worker: its prompt's blocks may partly be in Redis already (a lookup first).
    assert.deepEqual(
      under(prefillServer).filter((n) => n !== "kv_transfer.read"),
      ["queue", "prefill", "kv_transfer.write"],
    );
    // The decode worker reads the prefill worker's blocks before it queues, then decodes.
    assert.deepEqual(under(decodeServer), ["kv_transfer.read", "queue", "prefill", "decode"]);
    const read = spans.find((s) => s.name === "kv_transfer.read" && s.parentSpanId === decodeServer.spanId)!;
    assert.equal(
      read.attributes["tessera.kv.blocks"],
      Math.floor(p.length / 16),
      "the decode worker read the prefill worker's blocks",
    );
    const write = spans.find((s) => s.name === "kv_transfer.write")!;
    assert.ok(write.endNs <= read.startNs, "the blocks were written before they were read");
    assert.ok(requestSpan.endNs >= decodeClient.endNs && requestSpan.startNs <= prefillClient.startNs);
    for (const span of spans) assert.equal(span.attributes["tessera.request_id"], requestId, span.name);
  });

  it("under load, Prometheus answers every dashboard query with data from metrics that exist, and evaluates every alert rule", async () => {
    // rate() needs a sample from before the load and one after it. (Prometheus applies its targets
    // a few seconds after it starts.)
    await eventually(
      "a first scrape of every target",
      async () => (await prometheus.query("up == 1")).length === 4,
      20_000,
    );
    await load(stack, router);
    const loaded = Date.now() / 1000;
    const jobs = ["tessera-router", "tessera-workers", "tessera-operator"];
    await eventually(
      "a scrape of every target after the load",
      async () => {
        const up = await prometheus.query("timestamp(up == 1)");
        // Two scrapes after the load: a counter born during it has two samples for rate().
        return up.length === 4 && up.every((s) => Number(s.value[1]) > loaded + 1.5) && jobs;
      },
      20_000,
    );
    // A scrape that times out on this shared machine leaves a counter born during the load with one
    // sample, and rate() over one sample is empty: the queries are asked again until every one
    // answers, or the deadline passes and the test fails with what is still missing.
    const existing = new Set<string>();
    let failures = await dashboardFailures(prometheus, existing);
    for (const deadline = Date.now() + 20_000; failures.length > 0 && Date.now() < deadline; ) {
      await new Promise((r) => setTimeout(r, 1_000));
      failures = await dashboardFailures(prometheus, existing);
    }
    assert.deepEqual(failures, []);
    assert.ok(stack.failing.refused >= 1, "a request met the failing endpoint");
    assert.ok(existing.size >= 30, `${existing.size} metrics charted`);

    const rules = await eventually("every rule evaluated", async () => {
      const groups = (
        await prometheus.api<{ groups: { rules: { name: string; health: string; lastError?: string }[] }[] }>(
          "/api/v1/rules",
        )
      ).groups;
      const all = groups.flatMap((g) => g.rules);
      return all.length === 5 && all.every((r) => r.health !== "unknown") && all;
    });
    assert.deepEqual(
      rules.filter((r) => r.health !== "ok").map((r) => `${r.name}: ${r.lastError}`),
      [],
    );
  });
});

/** What Prometheus cannot answer of each dashboard query and variable; `existing` collects the metrics it has. */
async function dashboardFailures(prometheus: PrometheusServer, existing: Set<string>): Promise<string[]> {
  const failures: string[] = [];
  for (const q of dashboardQueries(path.join(CHART, "dashboards"))) {
    for (const metric of q.metrics) {
      if (existing.has(metric)) continue;
      if ((await prometheus.query(`count(${metric})`)).length > 0) existing.add(metric);
      else failures.push(`${q.dashboard} / ${q.panel}: no series named ${metric}`);
    }
    const result = await prometheus.query(q.promql).catch((err: Error) => err);
    if (result instanceof Error) failures.push(`${q.dashboard} / ${q.panel}: ${result.message}`);
    else if (result.length === 0) failures.push(`${q.dashboard} / ${q.panel}: no data for ${q.promql}`);
    else if (result.every((s) => Number.isNaN(Number(s.value[1]))))
      failures.push(`${q.dashboard} / ${q.panel}: only NaN for ${q.promql}`);
  }
  for (const v of variableQueries(path.join(CHART, "dashboards"))) {
    const values = await prometheus.api<string[]>(`/api/v1/label/${v.label}/values?match[]=${v.metric}`);
    if (!values.includes("tiny-llama"))
      failures.push(`${v.dashboard} $${v.variable}: ${JSON.stringify(values)}`);
  }
  return failures;
}

/**
 * Traffic that exercises every charted path: routed gRPC and HTTP requests over many prefixes (some
 * land on the failing endpoint first: retries and an ejection), repeated deterministic requests
 * (cache hits), invalid requests (admission rejections, failed requests), concurrent requests,
 * prefill -> decode hand-offs through Redis (KV reads), and a model change the operator reconciles.
 */
async function load(stack: LiveStack, router: GrpcClient): Promise<void> {
  const routed = Array.from({ length: 24 }, (_, i) =>
    generate(router, { prompt: prompt(100 + i, 40 + i), maxTokens: 6 }),
  );
  await Promise.all(routed);
  const http = (body: object) =>
    fetch(`${stack.router.httpUrl}/v1/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "tiny-llama", ...body }),
    });
  for (let i = 0; i < 3; i++)
    await (await http({ prompt: "Repeat after me", max_tokens: 4, temperature: 0 })).text();
  assert.equal((await http({ prompt: "x", max_tokens: -1 })).status, 400);
  await assert.rejects(
    generate(router, { prompt: [3, 99_999], maxTokens: 2, model: "tiny-llama" }),
    /token_ids/,
  );
  // The operator reconciles a change.
  await stack.kubectl(
    "patch",
    "inferencemodel",
    "tiny-llama",
    "--type=merge",
    "-p",
    '{"spec":{"replicas":2}}',
  );
  const [a, b] = stack.workers.map((w) => new GrpcClient(w.address)) as [GrpcClient, GrpcClient];
  try {
    for (let i = 0; i < 3; i++) {
      const p = prompt(200 + i, 70);
      const [first] = await generate(a, { prompt: p, maxTokens: 1, kv: { awaitWrites: true } });
      await generate(b, { prompt: [...p, first!], maxTokens: 4, kv: { expectedRemoteBlocks: 4 } });
    }
  } finally {
    a.close();
    b.close();
  }
}
