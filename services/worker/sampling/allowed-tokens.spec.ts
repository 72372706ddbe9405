import assert from "node:assert/strict";
import fc from "fast-check";
import { greedySampling } from "../../inference/sampling-params.ts";
import { allowedIds, isAllowed, maskDisallowed } from "./allowed-tokens.ts";
import { TokenHistory } from "./penalties.ts";
import { logitStats, Sampler, sampleRow } from "./sampler.ts";

/** A bitmask allowing exactly `ids`, sized for `vocab` ids. */
function maskOf(ids: readonly number[], vocab: number): Int32Array {
  const mask = new Int32Array(Math.ceil(vocab / 32));
  for (const id of ids) mask[id >> 5]! |= 1 << (id & 31);
  return mask;
}

describe("allowed-token masks", () => {
  it("reads the bitmask as xgrammar fills it: bit id % 32 of word id / 32", () => {
    const mask = maskOf([0, 31, 32, 70], 100);
    assert.deepEqual(allowedIds(mask, 100), [0, 31, 32, 70]);
    assert.deepEqual(allowedIds(mask, 100, 2), [0, 31]);
    assert.ok(isAllowed(mask, 31) && !isAllowed(mask, 30) && !isAllowed(mask, 5000));
  });

  it("masks every id the bitmask does not allow, and the ids past its end (padding rows)", () => {
    const logits = new Float32Array(80).fill(1);
    maskDisallowed(logits, maskOf([3, 40], 64));
    for (const [id, v] of logits.entries())
      assert.equal(v, id === 3 || id === 40 ? 1 : Number.NEGATIVE_INFINITY, `id ${id}`);
    assert.throws(() => maskDisallowed(new Float32Array(8), maskOf([], 8)), /allows no token/);
  });

  it("a sampled token is always allowed; its logprob and the alternatives are the raw ones", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 300 }),
        fc.array(fc.nat(299), { minLength: 1, maxLength: 20 }),
        fc.double({ min: 0, max: 2, noNaN: true }),
        fc.double({ min: 0.1, max: 1, noNaN: true }),
        fc.nat(5),
        fc.integer({ min: 1, max: 1000 }),
        (vocab, picks, temperature, topP, logprobs, seed) => {
          const ids = [...new Set(picks.map((p) => p % vocab))];
          const raw = Float32Array.from({ length: vocab }, (_, i) => Math.sin(i * 12.9898 + seed) * 6);
          const { logSumExp } = logitStats(raw);
          const params = greedySampling({
            temperature,
            topP,
            logprobs,
            seed: BigInt(seed),
            repetitionPenalty: 1.3,
          });
          const sampler = new Sampler(params);
          const history = sampler.usesHistory ? new TokenHistory([ids[0]!, 1]) : undefined;
          const logits = raw.slice();
          const token = sampler.sample(logits, 7, history, maskOf(ids, vocab));
          assert.ok(ids.includes(token.tokenId), `sampled ${token.tokenId}, allowed ${ids}`);
          assert.ok(Math.abs(token.logprob - (raw[token.tokenId]! - logSumExp)) < 1e-4);
          const top = [...raw.keys()].sort((a, b) => raw[b]! - raw[a]! || a - b).slice(0, logprobs);
          assert.deepEqual(
            token.top.map((t) => t.tokenId),
            top,
          );
          // The last stage of a parallel group picks the same from the row's sampling.
          const row = sampler.prepare(7, history, maskOf(ids, vocab));
          assert.equal(sampleRow(raw.slice(), row).tokenId, token.tokenId);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("greedy picks the best allowed token even when a disallowed one is far better", () => {
    const logits = Float32Array.from([10, 0, 1, 9, 2]);
    const token = new Sampler(greedySampling()).sample(logits, 0, undefined, maskOf([2, 4], 5));
    assert.equal(token.tokenId, 4);
  });
});
