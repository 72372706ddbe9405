// The model thread: loads a checkpoint, builds its ONNX graph and runs it with onnxruntime-node.
// session.run blocks the thread it runs on, so it runs here and never on the event loop serving requests.
// The thread owns the KV pool (one [slots, kvH, D] array per layer for keys and for values); the event
// loop sends token ids and block tables and gets the logits back.
import { parentPort, workerData } from "node:worker_threads";
import { TesseraError } from "../../kernel/errors.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { selectAttention } from "./attention-selection.ts";
import type { FromModelThread, ModelThreadOptions, ToModelThread } from "./messages.ts";
import type { StepExecutor } from "./step-executor.ts";

const port = parentPort!;
const options = workerData as ModelThreadOptions;
const post = (m: FromModelThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

const started = performance.now();
let executor: StepExecutor;
try {
  const checkpoint = describeCheckpoint(options.modelDir, options.architectureOverride);
  const weights = WeightStore.open(options.modelDir);
  const selected = await selectAttention(checkpoint, weights, options);
  executor = selected.executor;
  post({
    type: "ready",
    loadMs: performance.now() - started,
    graphBytes: executor.graphBytes,
    attention: executor.attention,
    attentionTimings: selected.timings,
    attentionRejected: selected.rejected,
  });
} catch (err) {
  const e = TesseraError.from(err);
  post({ type: "error", id: undefined, code: e.code, message: e.message });
  process.exit(1);
}

// Messages are handled one at a time, in order: an export queued after a step sees that step's K/V,
// and a step queued after an import sees the imported blocks.
let queue: Promise<void> = Promise.resolve();
port.on("message", (msg: ToModelThread) => {
  queue = queue.then(() => handle(msg));
});

async function handle(msg: ToModelThread): Promise<void> {
  try {
    switch (msg.type) {
      case "step": {
        const t0 = performance.now();
        const logits = await executor.run(msg.tokens, msg.seqs);
        post({ type: "logits", id: msg.id, logits, runMs: performance.now() - t0 }, [
          logits.buffer as ArrayBuffer,
        ]);
        return;
      }
      case "export": {
        const data = executor.exportBlocks(msg.blocks);
        post({ type: "blocks", id: msg.id, data }, [data.buffer as ArrayBuffer]);
        return;
      }
      case "import":
        executor.importBlocks(msg.blocks, msg.data);
        post({ type: "done", id: msg.id });
        return;
      case "close":
        await executor.release();
        port.close();
        return;
      default: {
        const never: never = msg;
        throw new Error(`unknown message ${JSON.stringify(never)}`);
      }
    }
  } catch (err) {
    const e = TesseraError.from(err);
    post({ type: "error", id: "id" in msg ? msg.id : undefined, code: e.code, message: e.message });
  }
}
