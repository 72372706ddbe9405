// A parallel replica whose member dies mid-request: every request in flight, in every virtual engine,
// ends with UNAVAILABLE before its deadline (never hangs), rank 0 reports NOT_SERVING, and the failure spreads to every member,
// which exit with code 1 so that Kubernetes restarts the group.
import assert from "node:assert/strict";
import path from "node:path";
import type { ServiceError } from "@grpc/grpc-js";
import { type GenerateResponse, Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../../services/kernel/errors.ts";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { REFERENCE_DIR } from "../../services/worker/testdata/reference.ts";
import { type Group, startGroup } from "./group.ts";
import { watchHealth } from "./health-watch.ts";

const MODEL = path.join(REFERENCE_DIR, "tiny-llama");

/**
 * Starts long generations (one per virtual engine and more: each engine has a batch in flight), kills
 * member `victim` once tokens flow, and returns how each call ended.
 */
async function killMidRequest(group: Group, victim: number): Promise<ServiceError[]> {
  const client = new GrpcClient(group.coordinator.address);
  let killed = false;
  const generate = (ids: number[]) => {
    const stream = client.serverStream(
      Inference.method.generate,
      {
        prompt: { case: "tokenIds", value: { ids } },
        sampling: { maxTokens: 480, ignoreEos: true },
      },
      { deadline: Date.now() + 60_000 },
    );
    return new Promise<ServiceError>((resolve, reject) => {
      stream.on("data", (m: GenerateResponse) => {
        if (killed || m.tokens.length === 0) return;
        killed = true;
        group.members[victim]!.child.kill("SIGKILL");
      });
      stream.on("end", () => reject(new Error("a generation finished although a member died")));
      stream.on("error", (err: ServiceError) => resolve(err));
    });
  };
  try {
    return await Promise.all(
      [
        [1, 5, 9, 33],
        [2, 7, 11],
        [3, 8, 13, 21, 34],
      ].map(generate),
    );
  } finally {
    client.close();
  }
}

const LAYOUTS = [
  { name: "PP=2, stage 1 killed", stages: 2, tensorSize: 1, victim: 1 },
  { name: "TP=2 x PP=2, stage 1 rank 1 killed", stages: 2, tensorSize: 2, victim: 3 },
];

for (const layout of LAYOUTS)
  describe(`parallel replica failure: ${layout.name} (e2e)`, () => {
    let group: Group;
    before(async () => {
      group = await startGroup(MODEL, layout, ["--threads", "1", "--micro-batches", "2"]);
    });
    after(() => group?.stop());

    it("fails every request in flight with UNAVAILABLE, reports NOT_SERVING and takes the whole group down", async () => {
      const health = watchHealth(group.coordinator.address);
      try {
        await health.until("SERVING");
        const started = Date.now();
        const errors = await killMidRequest(group, layout.victim);
        for (const err of errors) assert.equal(err.code, Code.UNAVAILABLE, err.details);
        assert.ok(Date.now() - started < 30_000, "the requests failed well within their deadline");
        await health.until("NOT_SERVING");
      } finally {
        health.close();
      }
      const survivors = group.members.filter((_, g) => g !== layout.victim);
      assert.deepEqual(
        await Promise.all(survivors.map((m) => m.exited)),
        survivors.map(() => 1),
      );
    });
  });
