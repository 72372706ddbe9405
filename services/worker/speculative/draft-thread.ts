// The draft model's thread: it loads the draft (a whole model, its own KV pool) and runs each proposal
// round's k steps back to back, picking each step's proposals here (draft-picker.ts), so that the
// event loop hands over a round and gets its proposals back in one round trip. A draft step is cheap
// (a fraction of the target's), so what surrounds it counts: through the engine's model runner each
// step was a message to its thread and back, the coordinator's bookkeeping, and a vocabulary-sized
// log-sum-exp for a greedy pick that needs only the argmax.
//
// The draft's matrices are widened to float32 at load whatever the checkpoint stores: a 16-bit matrix
// is cast to float32 inside every step (graph/graph-weights.ts), which for a draft is most of a step
// that runs k times per target step (a 1.4M-parameter draft: 0.28 -> 0.19 ms a step), and a draft's
// float32 copy is small beside the target's weights.
import { parentPort, workerData } from "node:worker_threads";
import { TesseraError } from "../../kernel/errors.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { selectAttention } from "../runtime/attention-selection.ts";
import { collectGarbage } from "../runtime/collect-garbage.ts";
import type { ShardExecutor } from "../runtime/shard-executor.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import type { TokenDistribution } from "../sampling/sampler.ts";
import type { DraftRow, DraftThreadOptions, FromDraft, ToDraft } from "./draft-messages.ts";
import { DraftPicker } from "./draft-picker.ts";

const port = parentPort!;
const o = workerData as DraftThreadOptions;
const post = (m: FromDraft) => port.postMessage(m);
const pickers = new Map<number, DraftPicker>();

let executor: ShardExecutor;
let vocab: number;
try {
  const started = performance.now();
  const checkpoint = describeCheckpoint(o.modelDir);
  vocab = checkpoint.config.vocabSize;
  const weights = WeightStore.open(o.modelDir, { widen: true });
  ({ executor } = await selectAttention(checkpoint, weights, o));
  collectGarbage();
  post({ type: "ready", attention: executor.attention, loadMs: performance.now() - started });
} catch (err) {
  const e = TesseraError.from(err);
  post({ type: "error", id: undefined, code: e.code, message: e.message });
  process.exit(1);
}

port.on("message", (msg: ToDraft) => void handle(msg));

async function handle(msg: ToDraft): Promise<void> {
  if (msg.type === "close") {
    await executor.release();
    port.close();
    return;
  }
  try {
    for (const key of msg.released) pickers.delete(key);
    const started = performance.now();
    const { tokens, q } = await round(msg.rows);
    post({ type: "proposed", id: msg.id, tokens, q, runMs: performance.now() - started });
  } catch (err) {
    const e = TesseraError.from(err);
    post({ type: "error", id: msg.id, code: e.code, message: e.message });
  }
}

/**
 * One round: step 0 feeds each row's unseen tokens, step i > 0 its proposal of step i - 1, all rows
 * still short of their k in one batch per step.
 */
async function round(rows: readonly DraftRow[]) {
  const picks = rows.map((r) => {
    if (r.open) pickers.set(r.key, new DraftPicker(r.open));
    const picker = pickers.get(r.key);
    if (!picker) throw new Error(`draft row ${r.key} was never opened`);
    return picker;
  });
  const tokens = rows.map((): number[] => []);
  const q = picks.map((p): TokenDistribution[] | undefined => (p.sampled ? [] : undefined));
  const past = rows.map((r) => r.numPast);
  const feed = rows.map((r) => r.feed);
  let live = rows.flatMap((r, i) => (r.k > 0 && r.feed.length > 0 ? [i] : []));
  while (live.length > 0) {
    const seqs: SequenceStep[] = [];
    let n = 0;
    for (const i of live) {
      seqs.push({
        numPast: past[i]!,
        numNew: feed[i]!.length,
        blockTable: rows[i]!.blockTable,
        needsLogits: true,
      });
      n += feed[i]!.length;
    }
    const ids = new Int32Array(n);
    n = 0;
    for (const i of live) {
      ids.set(feed[i]!, n);
      n += feed[i]!.length;
    }
    const logits = await executor.run(seqs, { tokens: ids });
    live.forEach((i, b) => {
      past[i]! += feed[i]!.length;
      const pick = picks[i]!.pick(logits.subarray(b * vocab, (b + 1) * vocab), past[i]!);
      tokens[i]!.push(pick.token);
      if (pick.q) q[i]!.push(pick.q);
      feed[i] = [pick.token];
    });
    live = live.filter((i) => tokens[i]!.length < rows[i]!.k);
  }
  return { tokens, q };
}
