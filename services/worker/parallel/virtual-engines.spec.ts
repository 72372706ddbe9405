// Virtual engines over a parallel group (engine/virtual-engines.ts): rank 0's Engine runs two
// scheduling loops over one in-process PP=2 (or TP=2) group (real gRPC links and shard threads), so two
// batches are in flight at once. They generate what one engine over one process generates; cancelling a request
// of one engine leaves the other's requests alone; a member that leaves fails every request in flight,
// in both engines, with UNAVAILABLE.
import assert from "node:assert/strict";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GenerateEvent, SamplingParams } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { freePort } from "../../kernel/free-port.ts";
import { createLogger } from "../../kernel/log.ts";
import { Engine } from "../engine/engine.ts";
import type { ModelRunner } from "../runtime/model-runner.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { ShardMember } from "./shard-member.ts";
import type { ShardPlacement } from "./shard-placement.ts";
import { ShardedRunner } from "./sharded-runner.ts";

const log = createLogger("test", "silent");
const MODEL = path.join(REFERENCE_DIR, "tiny-llama");
const ENGINE = { attention: "onnx-ops" as const, blockSize: 4, kvCacheBlocks: 256 };
const GREEDY: SamplingParams = greedySampling({ maxTokens: 16, ignoreEos: true });
const prompts = referenceCases("tiny-llama").map((c) => c.prompt_ids);

/** Counts the runner's steps in flight at once. */
class CountingRunner {
  maxInFlight = 0;
  private inFlight = 0;
  wrap(runner: ModelRunner): ModelRunner {
    const step: ModelRunner["step"] = async (tokens, seqs) => {
      this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
      try {
        return await runner.step(tokens, seqs);
      } finally {
        this.inFlight--;
      }
    };
    return Object.assign(Object.create(runner) as ModelRunner, { step });
  }
}

/** A group of two in this process (PP=2, or TP=2) with rank 0's Engine on top, running `virtualEngines` loops. */
async function startGroup(virtualEngines: number, layout: "PP=2" | "TP=2" = "PP=2") {
  const ports = await Promise.all([freePort(), freePort()]);
  const pipeline = layout === "PP=2";
  const placement = (g: number): ShardPlacement => ({
    stage: pipeline ? g : 0,
    stages: pipeline ? 2 : 1,
    tensorRank: pipeline ? 0 : g,
    tensorSize: pipeline ? 1 : 2,
    peers: ports.map((p) => `127.0.0.1:${p}`),
    formationTimeoutMs: 60_000,
    stepTimeoutMs: 60_000,
    microBatches: 1,
  });
  const member = ShardMember.start({
    modelDir: MODEL,
    architectureOverride: undefined,
    threads: 1,
    numBlocks: ENGINE.kvCacheBlocks,
    blockSize: ENGINE.blockSize,
    attention: ENGINE.attention,
    placement: placement(1),
    host: "127.0.0.1",
    port: ports[1]!,
    log,
  });
  const counter = new CountingRunner();
  let sharded: ShardedRunner | undefined;
  const engine = await Engine.load(MODEL, {
    threads: 1,
    engine: { ...ENGINE, virtualEngines },
    startRunner: async (o) => {
      sharded = await ShardedRunner.start({ ...o, placement: placement(0), log });
      return counter.wrap(sharded);
    },
  });
  return { engine, member: await member, counter, failed: sharded!.failed };
}

interface Output {
  ids: number[];
  reason: string | undefined;
}

async function collect(stream: AsyncIterable<GenerateEvent>, onToken?: () => void): Promise<Output> {
  const out: Output = { ids: [], reason: undefined };
  for await (const e of stream) {
    if (e.type === "tokens") {
      out.ids.push(...e.tokens.map((t) => t.tokenId));
      onToken?.();
    } else out.reason = e.reason;
  }
  return out;
}

let n = 0;
const request = (promptIds: number[]) => ({ requestId: `ve${n++}`, promptIds, sampling: GREEDY });

describe("virtual engines over a parallel group (in-process, over gRPC)", function () {
  this.timeout(120_000);
  let expected: Output[];
  before(async () => {
    const single = await Engine.load(MODEL, { threads: 1, engine: ENGINE });
    try {
      expected = await Promise.all(prompts.map((p) => collect(single.generate(request(p)))));
    } finally {
      await single.close();
    }
  });

  for (const layout of ["PP=2", "TP=2"] as const)
    it(`${layout}: keeps two steps in flight and generates what one engine in one process does`, async () => {
      const { engine, member, counter } = await startGroup(2, layout);
      try {
        assert.equal(engine.engines.size, 2);
        const got = await Promise.all(prompts.map((p) => collect(engine.generate(request(p)))));
        assert.deepEqual(got, expected);
        assert.equal(counter.maxInFlight, 2, "the two engines' steps overlapped");
        assert.equal(engine.engines.numRunning + engine.engines.numWaiting, 0);
        assert.equal(engine.pool.numUsed, 0, "every block went back to the pool");
      } finally {
        await engine.close();
        await member.close();
      }
    });

  it("cancels a request of one engine without disturbing the other's", async () => {
    const { engine, member } = await startGroup(2);
    try {
      const abort = new AbortController();
      // Requests alternate between the two engines: 0 and 2 in the first, 1 and 3 in the second.
      const runs = prompts.map((p, i) =>
        collect(engine.generate(request(p), i === 1 ? abort.signal : undefined), () => {
          if (i === 1) abort.abort();
        }),
      );
      const got = await Promise.all(runs);
      assert.equal(got[1]!.reason, "cancelled");
      assert.ok(got[1]!.ids.length < GREEDY.maxTokens);
      for (const [i, out] of got.entries()) if (i !== 1) assert.deepEqual(out, expected[i], `prompt ${i}`);
      assert.equal(engine.pool.numUsed, 0);
    } finally {
      await engine.close();
      await member.close();
    }
  });

  it("fails every request in flight, in both engines, with UNAVAILABLE when a member leaves", async () => {
    const { engine, member, failed } = await startGroup(2);
    const long = { ...GREEDY, maxTokens: 400 };
    let left = false;
    const runs = prompts.map((p) =>
      collect(engine.generate({ ...request(p), sampling: long }), () => {
        if (!left) {
          left = true;
          void member.close();
        }
      }).then(
        () => assert.fail("a request finished although a member left"),
        (err: unknown) => err,
      ),
    );
    try {
      const started = Date.now();
      const errors = await Promise.all(runs);
      assert.ok(Date.now() - started < 10_000, "failed within 10 s");
      for (const err of errors)
        assert.ok(err instanceof TesseraError && err.code === Code.UNAVAILABLE, String(err));
      assert.equal((await failed).code, Code.UNAVAILABLE);
      assert.equal(engine.engines.numRunning + engine.engines.numWaiting, 0);
    } finally {
      await engine.close();
      await member.close();
    }
  });
});
