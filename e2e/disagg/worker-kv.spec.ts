// Disaggregated prefill/decode between two real `tessera serve` workers through a real redis-server:
// the decode worker continues from the prefill worker's KV blocks and the output is exactly the
// colocated one; corrupted blocks, an unreachable Redis and a wrong password never change the output.
import assert from "node:assert/strict";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Redis } from "ioredis";
import type { GenerateRequestSchema, GenerateResponse } from "../../proto/gen/tessera/v1/inference_pb.js";
import { Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { type Served, startServe } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { checkHealth, waitUntilServing } from "../../services/rpc/health-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { tinyCheckpoint } from "../checkpoint.ts";

type Request = MessageInitShape<typeof GenerateRequestSchema>;

async function generate(client: GrpcClient, request: Request): Promise<number[]> {
  const stream = client.serverStream(Inference.method.generate, request);
  const ids: number[] = [];
  for await (const m of stream as AsyncIterable<GenerateResponse>)
    ids.push(...m.tokens.map((t) => t.tokenId));
  return ids;
}

const prompt = (seed: number, n: number) =>
  Array.from({ length: n }, (_, i) => 3 + ((seed * 131 + i * 37) % 500));
const ids = (value: number[]) => ({ case: "tokenIds" as const, value: { ids: value } });
const greedy = (maxTokens: number) => ({ maxTokens, ignoreEos: true });

async function metric(served: Served, name: string, labels: string): Promise<number> {
  const port = served.logs.find((l) => l["msg"] === "metrics served at /metrics")?.["metricsPort"];
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const line = text
    .split("\n")
    .find((l) => l.startsWith(`${name}{`) && labels.split(",").every((p) => l.includes(p)));
  return line ? Number(line.split(" ").at(-1)) : 0;
}

describe("disaggregated prefill and decode through Redis (e2e)", () => {
  let redis: RedisServer;
  let prefill: Served;
  let decode: Served;
  let a: GrpcClient;
  let b: GrpcClient;

  before(async () => {
    redis = await RedisServer.start();
    const model = await tinyCheckpoint();
    const kv = ["--kv-redis", redis.url, "--metrics-port", "0"];
    [prefill, decode] = await Promise.all([startServe(model, kv), startServe(model, kv)]);
    await Promise.all([waitUntilServing(prefill.address, 30_000), waitUntilServing(decode.address, 30_000)]);
    a = new GrpcClient(prefill.address);
    b = new GrpcClient(decode.address);
  });
  after(async () => {
    a.close();
    b.close();
    prefill.child.kill("SIGKILL");
    decode.child.kill("SIGKILL");
    await redis.close();
  });

  it("continues on the decode worker from the prefill worker's blocks with the colocated output", async () => {
    const p = prompt(1, 120);
    const colocated = await generate(a, { prompt: ids(p), sampling: greedy(12) });
    const [first] = await generate(a, { prompt: ids(p), sampling: greedy(1), kv: { awaitWrites: true } });
    assert.equal(first, colocated[0]);
    const handoff = [...p, first!];
    const blocks = Math.floor((handoff.length - 1) / 16);
    const fetchedBefore = await metric(decode, "tessera_kv_transfer_blocks_total", 'op="get",result="hit"');
    const rest = await generate(b, {
      prompt: ids(handoff),
      sampling: greedy(11),
      kv: { expectedRemoteBlocks: blocks },
    });
    assert.deepEqual([first, ...rest], colocated);
    const fetched =
      (await metric(decode, "tessera_kv_transfer_blocks_total", 'op="get",result="hit"')) - fetchedBefore;
    assert.equal(fetched, blocks, "the decode worker read the prompt's blocks instead of computing them");
  });

  it("detects a flipped byte in a stored block, counts it and recomputes the right output", async () => {
    const p = prompt(2, 80);
    const colocated = await generate(a, { prompt: ids(p), sampling: greedy(8) });
    const client = new Redis(redis.url);
    try {
      for (const key of await client.keys("tessera:kv:*")) {
        const value = await client.getBuffer(key);
        if (!value) continue;
        value[value.length - 5]! ^= 0x01;
        await client.set(key, value);
      }
    } finally {
      client.disconnect();
    }
    const [first] = await generate(a, { prompt: ids(p), sampling: greedy(1) });
    const rest = await generate(b, { prompt: ids([...p, first!]), sampling: greedy(7) });
    assert.deepEqual([first, ...rest], colocated);
    assert.ok((await metric(decode, "tessera_kv_transfer_blocks_total", 'result="checksum_failure"')) >= 1);
  });

  it("recomputes when Redis is gone, and reports the transfer path NOT_SERVING with a wrong password", async () => {
    const p = prompt(3, 70);
    const colocated = await generate(a, { prompt: ids(p), sampling: greedy(6) });
    await redis.stop();
    try {
      const rest = await generate(b, {
        prompt: ids([...p, colocated[0]!]),
        sampling: greedy(5),
        kv: { expectedRemoteBlocks: 4 },
      });
      assert.deepEqual([colocated[0], ...rest], colocated);
    } finally {
      await redis.restart();
    }
    const locked = await RedisServer.start({ password: "right" });
    const wrong = await startServe(await tinyCheckpoint(), [
      "--kv-redis",
      locked.url.replace("redis://", "redis://:wrong@"),
    ]);
    try {
      await waitUntilServing(wrong.address, 30_000);
      assert.equal(await checkHealth(wrong.address, "tessera.v1.KvTransfer"), "NOT_SERVING");
      const c = new GrpcClient(wrong.address);
      assert.deepEqual(await generate(c, { prompt: ids(p), sampling: greedy(6) }), colocated);
      c.close();
    } finally {
      wrong.child.kill("SIGKILL");
      await locked.close();
    }
  });
});
