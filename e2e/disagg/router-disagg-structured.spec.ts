// Structured output split between a prefill and a decode worker (real processes, a real redis-server):
// the prefill worker samples the first token under the constraint, the decode worker receives the
// prompt plus that token with SamplingParams.structured.matched_tokens = 1, replays it through its own
// matcher and constrains the rest. The client's stream equals one worker's whole generation for the
// same seed, validates against the schema and ends with stop.
import assert from "node:assert/strict";
import { FinishReason } from "../../proto/gen/tessera/v1/inference_pb.js";
import type { Served } from "../../services/cli/child-process.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { RedisServer } from "../../services/worker/kv-transfer/redis-harness.ts";
import { schemaProblem } from "../../services/worker/testdata/json-schema-check.ts";
import { type RunningRouter, startRouter, stopAll } from "../router/fleet.ts";
import { generate, idsOf, type Request, textOf } from "../router/grpc-stream.ts";
import { STRUCTURED_SCHEMAS } from "../router/structured-schemas.ts";
import { colocated, promptIds, startKvWorker, tinyCheckpointOf } from "./disagg-fleet.ts";

describe("structured output, disaggregated through the router (e2e)", function () {
  this.timeout(120_000);
  let redis: RedisServer;
  let prefill: Served;
  let decode: Served;
  let router: RunningRouter;
  let client: GrpcClient;

  before(async () => {
    redis = await RedisServer.start();
    const dir = await tinyCheckpointOf("llama");
    [prefill, decode] = await Promise.all([startKvWorker(dir, redis.url), startKvWorker(dir, redis.url)]);
    router = await startRouter(
      [
        { served: prefill, role: "prefill" },
        { served: decode, role: "decode" },
      ],
      { models: [{ id: "tiny-llama", tokenizer: dir }], cache: { enabled: false, coalesce: false } },
    );
    client = new GrpcClient(router.grpcAddress);
  });

  after(async () => {
    client?.close();
    await router?.stop();
    await stopAll([prefill, decode].filter((w) => w !== undefined));
    await redis?.close();
  });

  it("the decode worker continues the prefill worker's constrained output as one worker would", async () => {
    let finished = 0;
    for (const [i, schema] of STRUCTURED_SCHEMAS.entries()) {
      const request: Request = {
        model: "tiny-llama",
        prompt: { case: "tokenIds", value: { ids: promptIds(60 + i, 40) } },
        sampling: {
          maxTokens: 64,
          temperature: 0.9,
          seed: 20261127n + BigInt(i),
          structured: {
            kind: { case: "jsonSchema", value: { schemaJson: JSON.stringify(schema), strict: true } },
          },
        },
      };
      const routed = await generate(client, request);
      assert.equal(routed.error, undefined, routed.error?.details);
      assert.equal(routed.endpoint, prefill.address, "the first token came from the prefill worker");
      const reference = await colocated(decode, request);
      assert.deepEqual(idsOf(routed), reference.ids, `schema ${i}`);
      const last = routed.messages.at(-1)!;
      if (last.finishReason === FinishReason.LENGTH) continue;
      assert.equal(last.finishReason, FinishReason.STOP, textOf(routed));
      assert.equal(schemaProblem(schema, JSON.parse(textOf(routed))), undefined, textOf(routed));
      finished++;
    }
    assert.ok(finished >= 3, `only ${finished} of ${STRUCTURED_SCHEMAS.length} finished within max_tokens`);
  });
});
