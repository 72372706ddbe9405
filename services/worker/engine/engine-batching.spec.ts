// Continuous batching, prefix caching and preemption must never change what a request generates.
import assert from "node:assert/strict";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { SamplingParams } from "../../inference/types.ts";
import { collectOutput, type Output } from "../testdata/collect-output.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { Engine, type EngineOptions } from "./engine.ts";

const GREEDY: SamplingParams = greedySampling({ maxTokens: 24, ignoreEos: true });

let n = 0;
const req = (promptIds: number[], sampling: Partial<SamplingParams> = {}) => ({
  requestId: `b${n++}`,
  promptIds,
  sampling: { ...GREEDY, ...sampling },
});

const MODEL = path.join(REFERENCE_DIR, "tiny-llama");
const prompts = referenceCases("tiny-llama").map((c) => c.prompt_ids);
// A long shared prefix (a "system prompt") followed by different questions.
const system = prompts[0]!.slice(0, 100);
const withSystem = prompts.slice(1).map((p) => [...system, ...p]);

async function withEngine<T>(options: EngineOptions, fn: (e: Engine) => Promise<T>): Promise<T> {
  const engine = await Engine.load(MODEL, { threads: 1, ...options });
  try {
    return await fn(engine);
  } finally {
    await engine.close();
  }
}

async function oneAtATime(engine: Engine, inputs: number[][], sampling: Partial<SamplingParams> = {}) {
  const outs: Output[] = [];
  for (const p of inputs) outs.push(await collectOutput(engine.generate(req(p, sampling))));
  return outs;
}

describe("Engine batching", () => {
  let sequential: Output[];
  let sampledSequential: Output[];
  const all = [...prompts, ...withSystem];
  const sampled = { temperature: 0.9, topP: 0.9 };
  const seeded = (i: number) => ({ ...sampled, seed: BigInt(100 + i) });

  before(async () => {
    await withEngine({ engine: { enablePrefixCaching: false, maxNumSeqs: 1 } }, async (e) => {
      sequential = await oneAtATime(e, all);
      sampledSequential = [];
      for (const [i, p] of all.entries())
        sampledSequential.push(await collectOutput(e.generate(req(p, seeded(i)))));
    });
  });

  it("gives every request of a concurrent batch (mixed prefill chunks and decodes) its one-at-a-time output", async () => {
    await withEngine({ engine: { enablePrefixCaching: false, maxNumBatchedTokens: 64 } }, async (e) => {
      const batched = await Promise.all(all.map((p) => collectOutput(e.generate(req(p)))));
      assert.deepEqual(batched, sequential);
    });
  });

  it("reproduces seeded sampling whatever else is in the batch", async () => {
    await withEngine({ engine: { maxNumBatchedTokens: 96 } }, async (e) => {
      const batched = await Promise.all(all.map((p, i) => collectOutput(e.generate(req(p, seeded(i))))));
      assert.deepEqual(batched, sampledSequential);
    });
  });

  it("serves a cached prefix from the cache and generates exactly what a cold run does", async () => {
    await withEngine({}, async (e) => {
      const first = await collectOutput(e.generate(req(withSystem[0]!)));
      const hitsBefore = e.pool.prefixCacheStats.hits;
      const rest = await Promise.all(withSystem.slice(1).map((p) => collectOutput(e.generate(req(p)))));
      assert.deepEqual([first, ...rest], sequential.slice(prompts.length));
      // Each later request found the system prompt's full blocks (100 tokens -> 6 blocks of 16).
      assert.ok(e.pool.prefixCacheStats.hits - hitsBefore >= 6 * rest.length);
    });
  });

  it("preempts requests when KV blocks run out and still generates their exact outputs", async () => {
    // 40 blocks of 16 tokens cannot hold all requests at once: some are preempted and recomputed.
    await withEngine({ engine: { kvCacheBlocks: 40, enablePrefixCaching: false } }, async (e) => {
      const outs = await Promise.all(all.map((p) => collectOutput(e.generate(req(p)))));
      assert.deepEqual(outs, sequential);
      assert.ok(e.engines.numPreemptions > 0, "the workload was meant to force preemption");
    });
  });

  it("returns the free-block count to its baseline after cancellations", async () => {
    await withEngine({ engine: { enablePrefixCaching: false } }, async (e) => {
      const baseline = e.pool.numFree;
      const controllers = all.map(() => new AbortController());
      const runs = all.map(async (p, i) => {
        let count = 0;
        for await (const ev of e.generate(req(p, { maxTokens: 200 }), controllers[i]!.signal)) {
          if (ev.type === "tokens" && ++count === 2 + i) controllers[i]!.abort();
        }
      });
      await Promise.all(runs);
      assert.equal(e.pool.numFree, baseline);
      e.pool.checkInvariants();
    });
  });

  it("keeps block accounting consistent under a random workload of arrivals, lengths and cancellations", async () => {
    await withEngine({ engine: { kvCacheBlocks: 48, maxNumBatchedTokens: 48, maxNumSeqs: 6 } }, async (e) => {
      let seed = 12345;
      const rand = () => {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        return seed / 2 ** 31;
      };
      const runs: Promise<void>[] = [];
      for (let i = 0; i < 40; i++) {
        const base = all[Math.floor(rand() * all.length)]!;
        const prompt = base.slice(0, 1 + Math.floor(rand() * base.length));
        const controller = new AbortController();
        const cancelAt = rand() < 0.3 ? 1 + Math.floor(rand() * 8) : -1;
        runs.push(
          (async () => {
            let count = 0;
            try {
              for await (const ev of e.generate(
                req(prompt, { maxTokens: 1 + Math.floor(rand() * 30) }),
                controller.signal,
              )) {
                if (ev.type === "tokens" && ++count === cancelAt) controller.abort();
              }
            } catch {
              // A request too large for this small pool is rejected; that is fine here.
            }
            e.pool.checkInvariants();
          })(),
        );
        if (rand() < 0.5) await new Promise((r) => setTimeout(r, 5));
      }
      await Promise.all(runs);
      e.pool.checkInvariants();
      assert.equal(e.pool.numUsed, 0);
    });
  });
});
