// Two engines sharing a KV tier: one prefills, the other decodes from the transferred blocks, and the
// output is exactly the colocated one. Missing blocks are recomputed or fail, as the policy says.
import assert from "node:assert/strict";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GenerateEvent, SamplingParams } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { REFERENCE_DIR, referenceCases } from "../testdata/reference.ts";
import { Engine } from "./engine.ts";
import { MemoryKvTier } from "./memory-kv-tier.ts";
import type { RemoteKvOptions } from "./remote-kv.ts";

const GREEDY: SamplingParams = greedySampling({ maxTokens: 20, ignoreEos: true });

async function ids(stream: AsyncIterable<GenerateEvent>): Promise<number[]> {
  const out: number[] = [];
  for await (const e of stream) if (e.type === "tokens") out.push(...e.tokens.map((t) => t.tokenId));
  return out;
}

let n = 0;
const req = (
  promptIds: number[],
  maxTokens: number,
  kv?: { expectedRemoteBlocks?: number; awaitWrites?: boolean },
) => ({
  requestId: `kv${n++}`,
  promptIds,
  sampling: { ...GREEDY, maxTokens },
  ...(kv && { kv }),
});

const MODEL = path.join(REFERENCE_DIR, "tiny-mistral");
const load = (remoteKv?: RemoteKvOptions) =>
  Engine.load(MODEL, { threads: 1, ...(remoteKv && { remoteKv }) });

describe("Engine with a remote KV tier", () => {
  const prompt = referenceCases("tiny-mistral")[0]!.prompt_ids.slice(0, 150);
  const tier = new MemoryKvTier();
  const options = (policy: "recompute" | "fail"): RemoteKvOptions => ({
    tier,
    readThrough: true,
    writeThrough: true,
    policy,
  });
  let colocated: number[];
  let prefill: Engine;
  let decode: Engine;

  before(async () => {
    const plain = await load();
    colocated = await ids(plain.generate(req(prompt, 20)));
    await plain.close();
    prefill = await load(options("recompute"));
    decode = await load(options("fail"));
  });
  after(async () => {
    await prefill.close();
    await decode.close();
  });

  it("decodes from blocks another engine prefilled and matches the colocated output", async () => {
    const [first] = await ids(prefill.generate(req(prompt, 1, { awaitWrites: true })));
    assert.equal(first, colocated[0]);
    const handoff = [...prompt, first!];
    const expected = Math.floor((handoff.length - 1) / 16); // 9 full blocks of the 151 tokens
    const rest = await ids(decode.generate(req(handoff, 19, { expectedRemoteBlocks: expected })));
    assert.deepEqual([first, ...rest], colocated);
    assert.equal(decode.remote!.stats.fetched, expected);
    assert.equal(decode.pool.numUsed, 0);
  });

  it("fails a handoff whose blocks are gone under policy fail, and recomputes under policy recompute", async () => {
    tier.clear();
    // A prompt neither engine has seen, so the decode engine's local cache cannot cover it either.
    const handoff = [...referenceCases("tiny-mistral")[0]!.prompt_ids.slice(230, 330), 17];
    await assert.rejects(
      ids(decode.generate(req(handoff, 5, { expectedRemoteBlocks: 6 }))),
      (e: unknown) => e instanceof TesseraError && e.code === Code.UNAVAILABLE,
    );
    assert.equal(decode.pool.numUsed, 0);
    const tolerant = await load(options("recompute"));
    try {
      const fresh = await load();
      const want = await ids(fresh.generate(req(handoff, 5)));
      await fresh.close();
      tier.clear();
      assert.deepEqual(await ids(tolerant.generate(req(handoff, 5, { expectedRemoteBlocks: 6 }))), want);
      assert.ok((tolerant.remote!.stats.fallbacks["miss"] ?? 0) >= 1);
    } finally {
      await tolerant.close();
    }
  });

  it("shares a prefix across engines: blocks one engine computed are fetched, not recomputed, by the other", async () => {
    tier.clear();
    const system = referenceCases("tiny-mistral")[0]!.prompt_ids.slice(150, 214); // 64 tokens = 4 blocks
    await ids(prefill.generate(req([...system, 5, 6, 7], 2)));
    const fetchedBefore = decode.remote!.stats.fetched;
    await ids(decode.generate(req([...system, 9, 9], 2)));
    assert.equal(decode.remote!.stats.fetched - fetchedBefore, 4);
  });
});
