// A whole parallel group in one process, over real gRPC links and real shard threads: rank 0's
// ShardedRunner and the other members (ShardMember) on free ports. The runner's steps and KV blocks
// equal the single-process ModelRunner's (the same runner over a group of one, which sends nothing
// over any link and fails only the step whose run fails); a member that leaves fails the waiting step
// with UNAVAILABLE. (Groups of `tessera serve` processes are tested in e2e/parallel.)
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { greedySampling } from "../../inference/sampling-params.ts";
import type { GeneratedToken } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { freePort } from "../../kernel/free-port.ts";
import { createLogger } from "../../kernel/log.ts";
import { secretFiles, testCa, testLeaf, writeSecretVolume } from "../../rpc/testing/test-pki.ts";
import type { TlsSettings } from "../../rpc/tls-credentials.ts";
import type { QuantOptions } from "../model/quantize-blocks.ts";
import { ModelRunner } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { TokenHistory } from "../sampling/penalties.ts";
import { Sampler } from "../sampling/sampler.ts";
import { REFERENCE_DIR } from "../testdata/reference.ts";
import { ShardMember } from "./shard-member.ts";
import type { ShardPlacement } from "./shard-placement.ts";
import { ShardedRunner } from "./sharded-runner.ts";

const log = createLogger("test", "silent");
const MODEL = path.join(REFERENCE_DIR, "tiny-qwen2");
const POOL = { numBlocks: 32, blockSize: 4, threads: 1, attention: "onnx-ops" as const };

async function startGroup(
  stages: number,
  tensorSize: number,
  microBatches = 2,
  tls?: TlsSettings,
  quantization?: QuantOptions,
) {
  const ports = await Promise.all(Array.from({ length: stages * tensorSize }, freePort));
  const peers = ports.map((p) => `127.0.0.1:${p}`);
  const placement = (g: number): ShardPlacement => ({
    stage: Math.floor(g / tensorSize),
    stages,
    tensorRank: g % tensorSize,
    tensorSize,
    peers,
    formationTimeoutMs: 60_000,
    stepTimeoutMs: 60_000,
    microBatches,
    ...(tls && { tls }),
  });
  const common = {
    modelDir: MODEL,
    architectureOverride: undefined,
    ...POOL,
    ...(quantization && { quantization }),
    log,
  };
  const members = ports
    .slice(1)
    .map((port, i) => ShardMember.start({ ...common, placement: placement(i + 1), host: "127.0.0.1", port }));
  const runner = await ShardedRunner.start({ ...common, placement: placement(0) });
  return { runner, members: await Promise.all(members) };
}

/** Two sequences: prefill (in one step), then three decode steps fed with the argmax. */
async function trace(runner: ModelRunner): Promise<Float32Array[]> {
  let seqs: SequenceStep[] = [
    { numPast: 0, numNew: 9, blockTable: [5, 1, 7], needsLogits: true },
    { numPast: 0, numNew: 6, blockTable: [2, 3, 4], needsLogits: true },
  ];
  let tokens = Int32Array.from([1, 20, 33, 47, 5, 61, 7, 80, 9, 100, 11, 120, 13, 140, 15]);
  const out: Float32Array[] = [];
  for (let step = 0; step < 4; step++) {
    const { logits } = await runner.step(tokens, seqs);
    out.push(logits);
    const vocab = logits.length / 2;
    const ids = [0, 1].map((r) => {
      const row = logits.subarray(r * vocab, (r + 1) * vocab);
      return row.indexOf(Math.max(...row));
    });
    tokens = Int32Array.from(ids);
    seqs = seqs.map((s) => ({ ...s, numPast: s.numPast + s.numNew, numNew: 1 }));
  }
  return out;
}

/** Ids the greedy request holds back (min_tokens 8 with these stop ids): its picks must avoid them. */
const HELD = Array.from({ length: 128 }, (_, id) => id);

/** logit_bias of the seeded request: enough to move its picks (the spec checks that it does). */
const BIAS = new Map([
  [300, 6],
  [301, 6],
  [302, 6],
]);

/**
 * Two requests' samplers: greedy with a repetition penalty and min_tokens holding HELD back, and seeded
 * top-p sampling with a frequency penalty and (unless `bias` is false) BIAS.
 */
function samplers(bias = true): { sampler: Sampler; history: TokenHistory }[] {
  const prompts = [
    [1, 20, 33, 47, 5, 61, 7, 80, 9],
    [100, 11, 120, 13, 140, 15],
  ];
  const params = [
    greedySampling({ maxTokens: 8, logprobs: 5, repetitionPenalty: 1.3, minTokens: 8, stopTokenIds: HELD }),
    greedySampling({
      maxTokens: 8,
      temperature: 0.8,
      topP: 0.9,
      seed: 7n,
      frequencyPenalty: 0.5,
      logprobs: 3,
      ...(bias && { logitBias: BIAS }),
    }),
  ];
  return params.map((p, i) => ({
    sampler: new Sampler(p, { promptLength: prompts[i]!.length }),
    history: new TokenHistory(prompts[i]!),
  }));
}

/**
 * The same two sequences, sampled: by the group's last stage (each row carries its sampling) when the
 * runner samples, else here from the returned logits, as the engine does (blocks of their own, apart
 * from `trace`'s).
 */
async function sampledTrace(
  runner: ModelRunner,
  bias = true,
  allowed?: Int32Array,
): Promise<GeneratedToken[][]> {
  const requests = samplers(bias);
  let seqs: SequenceStep[] = [
    { numPast: 0, numNew: 9, blockTable: [12, 13, 14], needsLogits: true },
    { numPast: 0, numNew: 6, blockTable: [15, 16, 17], needsLogits: true },
  ];
  let tokens = Int32Array.from([1, 20, 33, 47, 5, 61, 7, 80, 9, 100, 11, 120, 13, 140, 15]);
  const out: GeneratedToken[][] = [];
  for (let step = 0; step < 4; step++) {
    // The token each row predicts sits at index numPast + numNew of its sequence.
    const positions = seqs.map((s) => s.numPast + s.numNew);
    if (runner.samplesRows)
      seqs = seqs.map((s, r) => ({
        ...s,
        sampling: requests[r]!.sampler.prepare(positions[r]!, requests[r]!.history, allowed),
      }));
    const result = await runner.step(tokens, seqs);
    const vocab = result.logits.length / 2;
    const picked = requests.map(({ sampler, history }, r) => {
      if (!result.tokens)
        return sampler.sample(
          result.logits.subarray(r * vocab, (r + 1) * vocab),
          positions[r]!,
          history,
          allowed,
        );
      const row = result.tokens[r]!;
      assert.ok(!("error" in row), JSON.stringify(row));
      return row;
    });
    for (const [r, t] of picked.entries()) requests[r]!.history.append(t.tokenId);
    out.push(picked);
    tokens = Int32Array.from(picked.map((t) => t.tokenId));
    seqs = seqs.map((s) => ({ ...s, numPast: s.numPast + s.numNew, numNew: 1 }));
  }
  return out;
}

const maxDiff = (a: Float32Array, b: Float32Array) =>
  a.reduce((m, x, i) => Math.max(m, Math.abs(x - b[i]!)), 0);

describe("ShardedRunner (in-process group over gRPC)", () => {
  let single: ModelRunner;
  let expected: Float32Array[];
  let expectedTokens: GeneratedToken[][];
  before(async () => {
    single = await ModelRunner.start({ modelDir: MODEL, architectureOverride: undefined, ...POOL });
    expected = await trace(single);
    expectedTokens = await sampledTrace(single);
    // Without its logit_bias the seeded request picks other tokens: a group that dropped it would differ.
    const unbiased = await sampledTrace(single, false);
    assert.notDeepEqual(
      unbiased.map((rows) => rows[1]!.tokenId),
      expectedTokens.map((rows) => rows[1]!.tokenId),
    );
  });
  after(() => single.close());

  for (const [stages, tensorSize] of [
    [2, 1],
    [1, 2],
    [2, 2],
  ] as const)
    it(`PP=${stages} TP=${tensorSize}: same logits (1e-4) and KV blocks as one process`, async () => {
      const { runner, members } = await startGroup(stages, tensorSize);
      try {
        const got = await trace(runner);
        for (const [i, logits] of got.entries())
          assert.ok(maxDiff(logits, expected[i]!) <= 1e-4, `step ${i}`);
        const blocks = [5, 1, 3];
        const whole = await single.exportBlocks(blocks);
        const sharded = await runner.exportBlocks(blocks);
        assert.ok(maxDiff(sharded, whole) <= 1e-4, "exported blocks");
        await runner.importBlocks([9, 10, 11], whole.slice()); // the data is handed over (transferred)
        assert.deepEqual(await runner.exportBlocks([9, 10, 11]), whole);

        // Prompt logits (prompt logprobs): a row for every new token, the single process's to 1e-4.
        const prompt = Int32Array.from([1, 20, 33, 47, 5]);
        const promptSeq = [
          { numPast: 0, numNew: 5, blockTable: [20, 21], needsLogits: true, promptLogits: true },
        ];
        const wholeRows = (await single.step(prompt, promptSeq)).logits;
        const groupRows = await runner.step(prompt, promptSeq);
        assert.equal(groupRows.tokens, undefined);
        assert.equal(groupRows.logits.length, wholeRows.length);
        assert.equal(wholeRows.length, 5 * (expected[0]!.length / 2));
        assert.ok(maxDiff(groupRows.logits, wholeRows) <= 1e-4, "prompt logits");

        // The last stage samples: the same tokens as sampling the single process's logits here,
        // logprobs within 1e-4 (seeded draws, penalties and logit_bias travel with the rows).
        const sampled = await sampledTrace(runner);
        for (const rows of sampled) assert.ok(!HELD.includes(rows[0]!.tokenId), "min_tokens holds HELD back");
        for (const [step, rows] of sampled.entries())
          for (const [r, t] of rows.entries()) {
            const want = expectedTokens[step]![r]!;
            assert.equal(t.tokenId, want.tokenId, `step ${step} row ${r}`);
            assert.ok(Math.abs(t.logprob - want.logprob) <= 1e-4, `step ${step} row ${r} logprob`);
            assert.deepEqual(
              t.top.map((a) => a.tokenId),
              want.top.map((a) => a.tokenId),
            );
            for (const [k, a] of t.top.entries())
              assert.ok(Math.abs(a.logprob - want.top[k]!.logprob) <= 1e-4);
          }
      } finally {
        await runner.close();
        for (const m of members) await m.close();
      }
    });

  it("PP=2 TP=2: a speculative row's logits at all its positions (num_logits) are one process's", async () => {
    // A prefill, then one row of 4 tokens (a last token and 3 proposals) asking for 4 logits rows,
    // beside a plain decode row.
    const specTrace = async (runner: ModelRunner) => {
      const first = await runner.step(Int32Array.from([1, 20, 33, 47, 5, 61, 7, 100, 11]), [
        { numPast: 0, numNew: 6, blockTable: [20, 21, 22], needsLogits: true },
        { numPast: 0, numNew: 3, blockTable: [23, 24], needsLogits: true },
      ]);
      const next = await runner.step(Int32Array.from([9, 40, 41, 42, 12]), [
        { numPast: 6, numNew: 4, blockTable: [20, 21, 22], needsLogits: true, numLogits: 4 },
        { numPast: 3, numNew: 1, blockTable: [23, 24], needsLogits: true },
      ]);
      return [first.logits, next.logits];
    };
    const want = await specTrace(single);
    const { runner, members } = await startGroup(2, 2);
    try {
      const got = await specTrace(runner);
      assert.equal(
        got[1]!.length,
        (want[0]!.length / 2) * 5,
        "5 rows: 4 of the speculative row, 1 of the decode",
      );
      for (const [i, logits] of got.entries()) assert.ok(maxDiff(logits, want[i]!) <= 1e-4, `step ${i}`);
    } finally {
      await runner.close();
      for (const m of members) await m.close();
    }
  });

  // Structured outputs: the mask travels with each row (RowSampling.allowed_tokens) to the last stage.
  it("PP=2 TP=1 with a structured-output mask: the last stage samples only allowed ids, as one process does", async () => {
    const allowedIds = Array.from({ length: 40 }, (_, i) => 130 + 3 * i);
    const mask = new Int32Array(Math.ceil(expected[0]!.length / 32));
    for (const id of allowedIds) mask[id >> 5]! |= 1 << (id & 31);
    const want = await sampledTrace(single, true, mask);
    const { runner, members } = await startGroup(2, 1);
    try {
      const got = await sampledTrace(runner, true, mask);
      for (const rows of got) for (const t of rows) assert.ok(allowedIds.includes(t.tokenId), `${t.tokenId}`);
      assert.deepEqual(
        got.map((rows) => rows.map((t) => t.tokenId)),
        want.map((rows) => rows.map((t) => t.tokenId)),
      );
    } finally {
      await runner.close();
      for (const m of members) await m.close();
    }
  });

  // Every member presents the one Secret's certificate and verifies its peers against its ca.crt.
  for (const [stages, tensorSize] of [
    [2, 1],
    [1, 2],
  ] as const)
    it(`PP=${stages} TP=${tensorSize} over mutual TLS: the same sampled ids as plaintext`, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), "tessera-group-tls-"));
      const ca = await testCa();
      writeSecretVolume(dir, secretFiles(await testLeaf(ca, "shard"), ca));
      const { runner, members } = await startGroup(stages, tensorSize, 2, { dir });
      try {
        const sampled = await sampledTrace(runner);
        assert.deepEqual(
          sampled.map((rows) => rows.map((t) => t.tokenId)),
          expectedTokens.map((rows) => rows.map((t) => t.tokenId)),
        );
      } finally {
        await runner.close();
        for (const m of members) await m.close();
        rmSync(dir, { recursive: true, force: true });
      }
    });

  // `tessera serve --quantization` on every member: each quantizes its own slices. With blocks of 16,
  // the tensor ranks' halves of o_proj and down_proj (48 and 128 input features) cut along block edges,
  // so the group's codes are the single process's. Not the same logits to 1e-4: MatMulNBits rounds its
  // activations to int8 per block, and the all-reduce's other summation order moves some of them by
  // a step (measured: 0.04 at the first step, where int4 itself is 2.3 from float32).
  it("PP=2 TP=2 with --quantization int4 (blocks of 16): the quantized single process's first logits", async () => {
    const int4: QuantOptions = { bits: 4, blockSize: 16, symmetric: true };
    const alone = await ModelRunner.start({
      ...POOL,
      modelDir: MODEL,
      architectureOverride: undefined,
      quantization: int4,
    });
    const want = (await trace(alone).finally(() => alone.close()))[0]!;
    const int4Error = maxDiff(want, expected[0]!);
    assert.ok(int4Error > 0.5, `int4 logits differ from float32's (${int4Error})`);
    const { runner, members } = await startGroup(2, 2, 2, undefined, int4);
    try {
      const got = (await trace(runner))[0]!;
      assert.ok(maxDiff(got, want) <= 0.1 * int4Error, `${maxDiff(got, want)} of ${int4Error}`);
      const vocab = got.length / 2;
      for (const r of [0, 1]) {
        const row = (a: Float32Array) => Array.from(a.subarray(r * vocab, (r + 1) * vocab));
        const argmax = (a: number[]) => a.indexOf(Math.max(...a));
        assert.equal(argmax(row(got)), argmax(row(want)), `row ${r}`);
      }
    } finally {
      await runner.close();
      for (const m of members) await m.close();
    }
  });

  it("does not form a group whose member's certificate another CA signed", async () => {
    const root = mkdtempSync(path.join(tmpdir(), "tessera-group-tls-"));
    const ca = await testCa();
    const stranger = await testCa("stranger-ca");
    writeSecretVolume(path.join(root, "ok"), secretFiles(await testLeaf(ca, "shard"), ca));
    writeSecretVolume(path.join(root, "bad"), secretFiles(await testLeaf(stranger, "shard"), ca));
    const [port0, port1] = [await freePort(), await freePort()];
    const peers = [`127.0.0.1:${port0}`, `127.0.0.1:${port1}`];
    const placement = (g: number, dir: string): ShardPlacement => ({
      ...{ stage: g, stages: 2, tensorRank: 0, tensorSize: 1, peers, microBatches: 1 },
      ...{ formationTimeoutMs: 3_000, stepTimeoutMs: 60_000, tls: { dir } },
    });
    const common = { modelDir: MODEL, architectureOverride: undefined, ...POOL, log };
    const member = await ShardMember.start({
      ...common,
      placement: placement(1, path.join(root, "bad")),
      host: "127.0.0.1",
      port: port1,
    });
    try {
      await assert.rejects(
        ShardedRunner.start({ ...common, placement: placement(0, path.join(root, "ok")) }),
        /did not form within 3000 ms|cannot link to member 1/,
      );
    } finally {
      await member.close();
      rmSync(root, { recursive: true, force: true });
    }
  });

  it("runs a single process as a group of one: no frame sent, and a failed run fails only its step", async () => {
    assert.ok(single instanceof ShardedRunner);
    const seq = (numNew: number) => ({ numPast: 0, numNew, blockTable: [20], needsLogits: true });
    await assert.rejects(
      single.step(Int32Array.of(1, 2), [seq(3)]),
      /2 tokens but its sequences add up to 3/,
    );
    const { logits } = await single.step(Int32Array.of(1, 2, 3), [seq(3)]);
    assert.equal(logits.length, expected[0]!.length / 2);
    const counters = single.member.counters();
    for (const [name, value] of Object.entries(counters))
      if (name.startsWith("sent_bytes_")) assert.equal(value, 0, name);
    assert.equal(counters.reduces, 0);
  });

  it("fails the waiting step with UNAVAILABLE, and every later one, when a member leaves", async () => {
    const { runner, members } = await startGroup(2, 1);
    try {
      const member = members[0]!;
      const step = runner
        .step(Int32Array.of(1, 2, 3), [{ numPast: 0, numNew: 3, blockTable: [0], needsLogits: true }])
        .then(
          () => "finished",
          (err: unknown) => err,
        );
      await member.close();
      const outcome = await step;
      if (outcome !== "finished") {
        assert.ok(outcome instanceof TesseraError && outcome.code === Code.UNAVAILABLE, String(outcome));
      }
      assert.equal((await runner.failed).code, Code.UNAVAILABLE);
      await assert.rejects(
        runner.step(Int32Array.of(1), [{ numPast: 0, numNew: 1, blockTable: [1], needsLogits: true }]),
        {
          code: Code.UNAVAILABLE,
        },
      );
    } finally {
      await runner.close();
    }
  });
});
