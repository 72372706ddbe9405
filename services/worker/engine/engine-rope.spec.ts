// Through the whole engine, a checkpoint with yarn or dynamic rope scaling, or Mistral's sliding
// window, generates transformers' greedy ids (devtools/reference/expected/rope.json), diverging only
// at a reference near-tie; with dynamic rope, sequences of different lengths batched together still
// get the ids each gets alone (each sequence's table follows its own length).
import assert from "node:assert/strict";
import fs from "node:fs";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GenerateEvent } from "../../inference/types.ts";
import { isNearTie } from "../testdata/reference.ts";
import { makeRopeCheckpoint, type RopePrompt, ropeCase, ropeReference } from "../testdata/rope-reference.ts";
import { Engine } from "./engine.ts";

async function generatedIds(stream: AsyncIterable<GenerateEvent>): Promise<number[]> {
  const ids: number[] = [];
  for await (const e of stream) if (e.type === "tokens") ids.push(...e.tokens.map((t) => t.tokenId));
  return ids;
}

let nextId = 0;
function generate(engine: Engine, p: RopePrompt): Promise<number[]> {
  const sampling = greedySampling({ maxTokens: p.output_ids.length, ignoreEos: true });
  return generatedIds(engine.generate({ requestId: `rope${nextId++}`, promptIds: p.prompt_ids, sampling }));
}

function assertReferenceIds(got: number[], p: RopePrompt, what: string): void {
  const firstDiff = got.findIndex((id, i) => id !== p.output_ids[i]);
  if (firstDiff >= 0)
    assert.ok(isNearTie(p.steps_top3[firstDiff]!), `${what}: diverged at step ${firstDiff}`);
  else assert.deepEqual(got, p.output_ids, what);
}

for (const c of ropeReference().cases) {
  describe(`Engine greedy generation with ${c.name}`, () => {
    let dir: string;
    let engine: Engine;
    before(async () => {
      dir = await makeRopeCheckpoint(c);
      engine = await Engine.load(dir, { threads: 1 });
    });
    after(async () => {
      await engine.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    it("reproduces transformers' greedy ids for every prompt, one at a time", async () => {
      for (const p of c.prompts)
        assertReferenceIds(await generate(engine, p), p, `${p.prompt_ids.length} tokens`);
    });

    if (c.prompts.length > 1) {
      it("gives the same ids to prompts of different lengths generated together", async () => {
        const together = await Promise.all(c.prompts.map((p) => generate(engine, p)));
        for (const [i, p] of c.prompts.entries())
          assertReferenceIds(together[i]!, p, `${p.prompt_ids.length} tokens`);
      });
    }
  });
}

describe("Engine with dynamic rope, prompt longer than max_position_embeddings", () => {
  const c = ropeCase("llama-dynamic");
  const long = c.prompts.find((p) => p.prompt_ids.length > 32)!;
  let dir: string;
  before(async () => {
    dir = await makeRopeCheckpoint(c);
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("keeps transformers' ids when the prompt is prefilled in chunks (a token budget of 16)", async () => {
    const engine = await Engine.load(dir, { threads: 1, engine: { maxNumBatchedTokens: 16 } });
    try {
      assertReferenceIds(await generate(engine, long), long, "chunked prompt");
    } finally {
      await engine.close();
    }
  });

  it("keeps transformers' ids after a shorter prompt with the same first blocks (no KV shared)", async () => {
    const engine = await Engine.load(dir, { threads: 1 });
    try {
      const shorter = { ...long, prompt_ids: long.prompt_ids.slice(0, 36) };
      await generate(engine, shorter);
      assertReferenceIds(await generate(engine, long), long, "after a shared prefix");
    } finally {
      await engine.close();
    }
  });
});
