// What the router does when workers fail: a worker killed mid-stream ends the stream with a clean
// UNAVAILABLE after the tokens already sent; a draining or dead worker gets no new request (active
// health Watch); without the Watch, requests to a dead worker fail over before their first token and
// the worker is ejected after consecutive failures (passive outlier ejection).
import assert from "node:assert/strict";
import type { Metadata, ServiceError } from "@grpc/grpc-js";
import { FinishReason, type GenerateResponse, Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { Code } from "../../services/kernel/errors.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { metricValue, type RunningRouter, startRouter, startWorkers, stopAll } from "./fleet.ts";
import { generate } from "./grpc-stream.ts";

const prompts = Array.from({ length: 24 }, (_, i) => `Question number ${i}: what happens next?`);

describe("tessera router failover (e2e)", () => {
  let workers: Served[];
  const routers: RunningRouter[] = [];
  const alive = () => workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);

  before(async () => {
    workers = await startWorkers(4);
  });

  after(async () => {
    await Promise.all(routers.map((r) => r.stop()));
    await stopAll(workers);
  });

  const byAddress = (address: string | undefined) => workers.find((w) => w.address === address)!;

  it("ends a stream whose worker dies with UNAVAILABLE, after the tokens already sent", async () => {
    const router = await startRouter(workers);
    routers.push(router);
    const client = new GrpcClient(router.grpcAddress);
    const stream = client.serverStream(Inference.method.generate, {
      prompt: { case: "text", value: "A very long story" },
      sampling: { maxTokens: 450, ignoreEos: true },
    });
    const messages: GenerateResponse[] = [];
    let endpoint: string | undefined;
    stream.on("metadata", (m: Metadata) => {
      endpoint = m.get("x-tessera-endpoint")[0]?.toString();
    });
    const ended = new Promise<ServiceError>((resolve) => stream.on("error", resolve));
    stream.on("data", (m: GenerateResponse) => {
      messages.push(m);
      if (messages.length === 3) byAddress(endpoint).child.kill("SIGKILL");
    });
    const error = await ended;
    client.close();
    assert.equal(error.code, Code.UNAVAILABLE);
    assert.match(error.details, /mid-stream/);
    assert.ok(messages.length >= 3, `${messages.length} messages`);
    assert.ok(
      messages.every((m) => m.finishReason === FinishReason.UNSPECIFIED),
      "no finish message",
    );
  });

  it("sends nothing to a worker that drains or died, and every request still succeeds", async () => {
    const router = routers[0]!;
    const draining = alive()[0]!;
    draining.child.kill("SIGTERM");
    await draining.exited;
    const gone = new Set(workers.filter((w) => !alive().includes(w)).map((w) => w.address));
    const client = new GrpcClient(router.grpcAddress);
    for (const prompt of prompts) {
      const routed = await generate(client, {
        prompt: { case: "text", value: prompt },
        sampling: { maxTokens: 2, temperature: 1 },
      });
      assert.equal(routed.error, undefined, routed.error?.details);
      assert.ok(!gone.has(routed.endpoint!), `${prompt} went to ${routed.endpoint}`);
    }
    client.close();
  });

  it("without health watching, fails over before the first token and ejects the dead worker", async () => {
    const router = await startRouter(alive(), {
      health: { watch: false },
      metricsPort: 0,
      cache: { enabled: false },
    });
    routers.push(router);
    const client = new GrpcClient(router.grpcAddress);
    const ask = (prompt: string) =>
      generate(client, {
        prompt: { case: "text", value: prompt },
        sampling: { maxTokens: 2, temperature: 1 },
      });
    const homes = await Promise.all(
      prompts.map(async (p) => ({ prompt: p, endpoint: (await ask(p)).endpoint })),
    );
    const victim = byAddress(homes[0]!.endpoint);
    const homedOnVictim = homes.filter((h) => h.endpoint === victim.address).map((h) => h.prompt);
    assert.ok(homedOnVictim.length >= 4, `${homedOnVictim.length} prompts homed on the victim`);
    victim.child.kill("SIGKILL");
    await victim.exited;
    for (const prompt of homedOnVictim) {
      const routed = await ask(prompt);
      assert.equal(routed.error, undefined, routed.error?.details);
      assert.notEqual(routed.endpoint, victim.address);
    }
    const metrics = router.metricsUrl!;
    assert.equal(
      await metricValue(metrics, "tessera_router_ejections_total", { endpoint: victim.address }),
      1,
    );
    assert.equal(
      await metricValue(metrics, "tessera_router_retries_total"),
      3,
      "three failures, then ejected: no more retries",
    );
    client.close();
  });
});
