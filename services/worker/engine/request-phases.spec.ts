// The phases a traced request reports: a prefill engine's queue, prefill and KV writes, and a decode
// engine's KV read, queue, (short) prefill and decode, in order in time.
import assert from "node:assert/strict";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GenerateRequest, SamplingParams } from "../../inference/types.ts";
import type { PhaseName, RequestPhases } from "../../kernel/telemetry/phase-spans.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { Engine } from "./engine.ts";
import { MemoryKvTier } from "./memory-kv-tier.ts";

const GREEDY: SamplingParams = greedySampling({ maxTokens: 6, ignoreEos: true });

interface Phase {
  name: PhaseName;
  start: number;
  end: number;
  attributes: Record<string, unknown>;
}

function recorder(): RequestPhases & { phases: Phase[] } {
  const phases: Phase[] = [];
  return {
    phases,
    phase: (name, start, end, attributes = {}) => phases.push({ name, start, end, attributes }),
  };
}

async function run(engine: Engine, request: GenerateRequest): Promise<void> {
  for await (const _ of engine.generate(request)) {
  }
}

describe("Engine request phases (tracing)", () => {
  const model = path.join(REFERENCE_DIR, "tiny-mistral");
  const prompt = referenceCases("tiny-mistral")[0]!.prompt_ids.slice(0, 70);
  const tier = new MemoryKvTier();
  const remoteKv = { tier, readThrough: false, writeThrough: true, policy: "recompute" as const };
  let prefill: Engine;
  let decode: Engine;

  before(async () => {
    [prefill, decode] = await Promise.all([
      Engine.load(model, { threads: 1, remoteKv }),
      Engine.load(model, { threads: 1, remoteKv: { ...remoteKv, readThrough: true, writeThrough: false } }),
    ]);
  });
  after(() => Promise.all([prefill.close(), decode.close()]));

  it("prefill then decode on another engine: each phase once, back to back, with their figures", async () => {
    const first = recorder();
    const sampling = { ...GREEDY, maxTokens: 1 };
    await run(prefill, {
      requestId: "p",
      promptIds: prompt,
      sampling,
      kv: { awaitWrites: true },
      trace: first,
    });
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(
      first.phases.map((p) => p.name),
      ["queue", "prefill", "kv_transfer.write"],
    );
    const [queue, compute, write] = first.phases;
    assert.ok(queue!.start <= queue!.end && queue!.end === compute!.start && compute!.start <= compute!.end);
    assert.equal(compute!.attributes["tessera.prompt_tokens"], 70);
    assert.ok(write!.start >= compute!.start && (write!.attributes["tessera.kv.stores"] as number) >= 1);

    const second = recorder();
    await run(decode, {
      requestId: "d",
      promptIds: prompt,
      sampling: GREEDY,
      kv: { expectedRemoteBlocks: 4 },
      trace: second,
    });
    assert.deepEqual(
      second.phases.map((p) => p.name),
      ["kv_transfer.read", "queue", "prefill", "decode"],
    );
    const [read, queued, prefilled, decoded] = second.phases;
    assert.equal(read!.attributes["tessera.kv.blocks"], 4);
    assert.ok(read!.end <= queued!.start && queued!.end === prefilled!.start);
    assert.equal(
      prefilled!.attributes["tessera.cached_prompt_tokens"],
      64,
      "the fetched blocks are not recomputed",
    );
    assert.ok(prefilled!.end === decoded!.start && decoded!.start <= decoded!.end);
    assert.equal(decoded!.attributes["tessera.output_tokens"], 6);
  });
});
