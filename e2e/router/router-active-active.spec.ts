// Active-active: two router processes over the same endpoints share no state, yet pick the same
// replica for (at least 99% of) the same requests at equal load, because the pick depends only on
// the endpoint names, the model revision and the prompt's tokens.
import assert from "node:assert/strict";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { type RunningRouter, sharedWorkers, startRouter } from "./fleet.ts";
import { generate } from "./grpc-stream.ts";

const tenants = ["You are a lawyer.", "You are a chef who loves Italian food.", "You answer in haiku."];
const requests = Array.from({ length: 200 }, (_, i) =>
  i % 2 === 0
    ? `${tenants[i % 3]!.repeat(6)} Question ${i}: ${"why ".repeat(i % 7)}?`
    : `Unrelated prompt ${i} ${"with words ".repeat(i % 11)}`,
);

describe("two routers, active-active (e2e)", () => {
  let workers: Served[];
  let routers: RunningRouter[];

  before(async () => {
    workers = await sharedWorkers();
    routers = await Promise.all([startRouter(workers), startRouter(workers)]);
  });

  after(async () => {
    await Promise.all(routers.map((r) => r.stop()));
  });

  it("pick the same replica for at least 99% of requests, spreading them over every replica", async () => {
    const [a, b] = routers.map((r) => new GrpcClient(r.grpcAddress));
    let same = 0;
    const used = new Set<string>();
    for (const text of requests) {
      const request = {
        prompt: { case: "text" as const, value: text },
        sampling: { maxTokens: 1, temperature: 1 },
      };
      // Each router has nothing else in flight: equal load, as the routers of a deployment see it.
      const [viaA, viaB] = await Promise.all([generate(a!, request), generate(b!, request)]);
      assert.equal(viaA.error ?? viaB.error, undefined);
      if (viaA.endpoint === viaB.endpoint) same++;
      used.add(viaA.endpoint!);
    }
    a!.close();
    b!.close();
    assert.ok(same / requests.length >= 0.99, `${same} of ${requests.length} picks agree`);
    assert.equal(used.size, workers.length, "every replica gets a share");
  });
});
