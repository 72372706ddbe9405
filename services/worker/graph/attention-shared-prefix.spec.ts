// The shared-prefix backend computes the attention onnx-ops computes: decode rows whose block tables
// start with the same blocks (a prompt head in the prefix cache) read those blocks once, and their
// logits agree with onnx-ops's, row by row, with the same greedy tokens, on every reference model, and
// with a sliding window (which shares nothing: every row takes the per-row path).
import assert from "node:assert/strict";
import path from "node:path";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { allocateShardPool, ShardExecutor } from "../runtime/shard-executor.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { REFERENCE_DIR, REFERENCE_MODELS } from "../testdata/reference.ts";
import type { AttentionBackend } from "./attention-backend.ts";
import { onnxOpsAttention } from "./attention-onnx-ops.ts";
import { sharedPrefixAttention } from "./attention-shared-prefix.ts";
import { wholeModel } from "./shard-graph.ts";

const BLOCK = 4;

function argmax(row: Float32Array): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

/**
 * Two heads of 3 blocks; rows 0-2 share head A (row 0 computed it), rows 3-4 head B, row 5 is alone.
 * Each row then decodes 6 tokens greedily. Returns every decode step's logits.
 */
async function decodeRows(
  model: string,
  attention: AttentionBackend,
  slidingWindow?: number,
): Promise<Float32Array[]> {
  const dir = path.join(REFERENCE_DIR, model);
  const described = describeCheckpoint(dir);
  const config = { ...described.config, ...(slidingWindow !== undefined && { slidingWindow }) };
  const checkpoint = { ...described, config };
  const spec = wholeModel(config.numLayers);
  const pool = allocateShardPool(config, spec, 64, BLOCK);
  const executor = await ShardExecutor.create(checkpoint, WeightStore.open(dir), attention, spec, pool, {
    blockSize: BLOCK,
    threads: 1,
    alone: true,
  });
  try {
    const ids = (n: number, seed: number) =>
      Array.from({ length: n }, (_, i) => (seed * 37 + i * 11 + 5) % config.vocabSize);
    const head = (h: number) => [h * 3, h * 3 + 1, h * 3 + 2];
    const own = (r: number) => Array.from({ length: 4 }, (_, i) => 6 + r * 4 + i);
    // [head, tail length]: rows of a head past its first row take the head from the cache.
    const rows = [
      { table: [...head(0), ...own(0)], tail: 3 },
      { table: [...head(0), ...own(1)], tail: 5 },
      { table: [...head(0), ...own(2)], tail: 1 },
      { table: [...head(1), ...own(3)], tail: 2 },
      { table: [...head(1), ...own(4)], tail: 6 },
      { table: [...own(5), ...own(6)], tail: 4 },
    ];
    const headLength = 3 * BLOCK;
    const tokens = rows.map((r, i) => [
      ...ids(headLength, i < 3 ? 100 : i < 5 ? 200 : 300 + i),
      ...ids(r.tail, i),
    ]);
    // The heads' first rows and row 5 compute their whole prompt, the others their tail after the head.
    const prefill: SequenceStep[] = rows.map((r, i) => {
      const fromCache = i === 1 || i === 2 || i === 4;
      const numPast = fromCache ? headLength : 0;
      return { numPast, numNew: tokens[i]!.length - numPast, blockTable: r.table, needsLogits: true };
    });
    const first = prefill.filter((_, i) => i === 0 || i === 3 || i === 5);
    const rest = prefill.filter((_, i) => !(i === 0 || i === 3 || i === 5));
    const feed = (steps: SequenceStep[], all: number[][]) =>
      Int32Array.from(steps.flatMap((s) => all[prefill.indexOf(s)]!.slice(s.numPast, s.numPast + s.numNew)));
    await executor.run(first, { tokens: feed(first, tokens) });
    let logits = await executor.run(rest, { tokens: feed(rest, tokens) });
    const order = [...rest.map((s) => prefill.indexOf(s))];
    const next = new Map(
      order.map((r, k) => [r, argmax(logits.subarray(k * config.vocabSize, (k + 1) * config.vocabSize))]),
    );
    // The first rows' next tokens come from a decode of their last prompt token instead (same logits).
    const out: Float32Array[] = [];
    const lengths = tokens.map((t) => t.length);
    for (const r of [0, 3, 5]) next.set(r, tokens[r]!.at(-1)!);
    for (const r of [0, 3, 5]) lengths[r]! -= 1;
    for (let step = 0; step < 6; step++) {
      const seqs = rows.map((r, i) => ({
        numPast: lengths[i]!,
        numNew: 1,
        blockTable: r.table,
        needsLogits: true,
      }));
      logits = await executor.run(seqs, { tokens: Int32Array.from(rows.map((_, i) => next.get(i)!)) });
      out.push(logits);
      rows.forEach((_, i) => {
        lengths[i]! += 1;
        next.set(i, argmax(logits.subarray(i * config.vocabSize, (i + 1) * config.vocabSize)));
      });
    }
    return out;
  } finally {
    await executor.release();
  }
}

describe("shared-prefix attention", () => {
  const cases = [
    ...REFERENCE_MODELS.map((model) => ({ model, window: undefined })),
    { model: "tiny-llama" as const, window: 10 },
  ];
  for (const { model, window } of cases)
    it(`decodes rows sharing prompt heads as onnx-ops does (${model}${window ? `, sliding window ${window}` : ""})`, async () => {
      const vocab = describeCheckpoint(path.join(REFERENCE_DIR, model)).config.vocabSize;
      const expected = await decodeRows(model, onnxOpsAttention, window);
      const actual = await decodeRows(model, sharedPrefixAttention, window);
      for (const [step, want] of expected.entries()) {
        const got = actual[step]!;
        let worst = 0;
        for (let i = 0; i < want.length; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
        assert.ok(worst < 1e-4, `step ${step}: logits differ by ${worst}`);
        for (let r = 0; r < want.length / vocab; r++)
          assert.equal(
            argmax(got.subarray(r * vocab, (r + 1) * vocab)),
            argmax(want.subarray(r * vocab, (r + 1) * vocab)),
            `step ${step}, row ${r}`,
          );
      }
    });
});
