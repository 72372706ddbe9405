import assert from "node:assert/strict";
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { ShardFrameSchema } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { greedySampling } from "../../inference/sampling-params.ts";
import { TokenHistory } from "../sampling/penalties.ts";
import { Sampler } from "../sampling/sampler.ts";
import {
  bytesToFloats,
  floatBytes,
  sampledFromWire,
  sampledToWire,
  sequencesFromWire,
  sequencesToWire,
} from "./frame-codec.ts";
import { sampleRows } from "./stage-worker.ts";

describe("frame codec", () => {
  it("round-trips a step's sequences and hidden states through a binary frame", () => {
    const seqs = [
      { numPast: 0, numNew: 5, blockTable: [3, 1], needsLogits: false },
      { numPast: 40, numNew: 1, blockTable: [7, 8, 9], needsLogits: true },
    ];
    const hidden = Float32Array.from({ length: 6 }, (_, i) => i / 7 - 0.25);
    const frame = create(ShardFrameSchema, {
      kind: {
        case: "activation",
        value: {
          batch: { stepId: 9n, microBatch: 1, sequences: sequencesToWire(seqs) },
          hidden: floatBytes(hidden),
        },
      },
    });
    const back = fromBinary(ShardFrameSchema, toBinary(ShardFrameSchema, frame));
    assert.equal(back.kind.case, "activation");
    if (back.kind.case !== "activation") return;
    assert.deepEqual(sequencesFromWire(back.kind.value.batch!.sequences), seqs);
    assert.deepEqual(bytesToFloats(back.kind.value.hidden), hidden);
  });

  it("copies unaligned bytes into a float array of its own", () => {
    const source = new Uint8Array(9);
    source.set(floatBytes(Float32Array.of(1.5, -2)), 1);
    assert.deepEqual([...bytesToFloats(source.subarray(1))], [1.5, -2]);
    assert.throws(() => bytesToFloats(new Uint8Array(3)), /not float32/);
  });

  it("carries each row's sampling to the last stage, and its sampled token back, exactly", () => {
    const sampler = new Sampler(
      greedySampling({
        temperature: 0.7,
        topK: 9,
        seed: 3n,
        repetitionPenalty: 1.1,
        logprobs: 2,
        minTokens: 2,
        stopTokenIds: [11],
        logitBias: new Map([
          [7, 3.5],
          [12, -100],
        ]),
      }),
      { eosTokenIds: [2], promptLength: 3 },
    );
    const history = new TokenHistory([5, 6, 6]);
    history.append(9);
    const seqs = [
      { numPast: 0, numNew: 3, blockTable: [1], needsLogits: true, sampling: sampler.prepare(4, history) },
      { numPast: 0, numNew: 2, blockTable: [2], needsLogits: false, promptLogits: true },
    ];
    const wire = create(ShardFrameSchema, {
      kind: {
        case: "tokens",
        value: { batch: { stepId: 1n, microBatch: 0, sequences: sequencesToWire(seqs) } },
      },
    });
    const back = fromBinary(ShardFrameSchema, toBinary(ShardFrameSchema, wire));
    assert.equal(back.kind.case, "tokens");
    if (back.kind.case !== "tokens") return;
    assert.deepEqual(sequencesFromWire(back.kind.value.batch!.sequences), seqs);
    assert.equal(sequencesToWire(seqs, false)[0]!.sampling, undefined);
    assert.deepEqual(
      [...seqs[0]!.sampling!.heldBackIds],
      [11, 2],
      "min_tokens not reached: eos and stop ids held",
    );
    assert.deepEqual([...seqs[0]!.sampling!.biasIds], [7, 12], "logit_bias reaches the last stage");

    const rows = sampleRows(
      Float32Array.from({ length: 16 }, (_, i) => Math.sin(i)),
      seqs,
      16,
    );
    const sampled = create(ShardFrameSchema, {
      kind: { case: "sampled", value: { stepId: 1n, microBatch: 0, rows: sampledToWire(rows) } },
    });
    const got = fromBinary(ShardFrameSchema, toBinary(ShardFrameSchema, sampled));
    if (got.kind.case !== "sampled") assert.fail(got.kind.case);
    assert.deepEqual(sampledFromWire(got.kind.value.rows), rows);
  });

  it("fails only the row that cannot be sampled", () => {
    const greedy = new Sampler(greedySampling({}));
    const seq = (needsLogits: boolean) => ({
      numPast: 0,
      numNew: 1,
      blockTable: [0],
      needsLogits,
      sampling: greedy.prepare(1),
    });
    const logits = Float32Array.of(0, 3, 1, Number.NaN, 0, 0);
    const rows = sampleRows(logits, [seq(true), seq(false), seq(true)], 3);
    assert.equal(rows.length, 2);
    assert.equal(rows[0] && "tokenId" in rows[0] && rows[0].tokenId, 1);
    assert.match("error" in rows[1]! ? rows[1].error : "", /NaN/);
  });
});
