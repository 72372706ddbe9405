// A shard's model thread: builds the shard's segment sessions and owns its KV pool, like model-thread.ts
// for the whole model. Runs, exports and imports are handled one at a time in arrival order; during a
// run, each partial sum goes to the event loop for the all-reduce and the run waits for the sum.
import { parentPort, workerData } from "node:worker_threads";
import { Code, TesseraError } from "../../common/errors.ts";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import { shardProblem } from "../graph/shard-graph.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { BACKENDS } from "./attention-selection.ts";
import { ShardExecutor } from "./shard-executor.ts";
import type { FromShardThread, ShardThreadOptions, ToShardThread } from "./shard-messages.ts";

const port = parentPort!;
const options = workerData as ShardThreadOptions;
const post = (m: FromShardThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

const started = performance.now();
let executor: ShardExecutor;
try {
  const checkpoint = describeCheckpoint(options.modelDir, options.architectureOverride);
  const problem = shardProblem(checkpoint.config, options.spec);
  if (problem) throw new TesseraError(Code.INVALID_ARGUMENT, `shard: ${problem}`);
  const backend =
    options.attention === "auto" ? onnxOpsAttention : BACKENDS.find((b) => b.name === options.attention);
  if (!backend)
    throw new TesseraError(Code.INVALID_ARGUMENT, `attention: unknown backend ${options.attention}`);
  executor = await ShardExecutor.create(
    checkpoint,
    WeightStore.open(options.modelDir),
    backend,
    options.spec,
    options,
  );
  post({
    type: "ready",
    loadMs: performance.now() - started,
    graphBytes: executor.graphBytes,
    attention: executor.attention,
    segments: executor.numSegments,
    blockFloats: executor.blockFloats,
  });
} catch (err) {
  const e = TesseraError.from(err);
  post({ type: "error", id: undefined, code: e.code, message: e.message });
  process.exit(1);
}

/** Runs waiting for the sum of a segment, by `${run}/${segment}`. */
const sums = new Map<string, { resolve(data: Float32Array): void; reject(err: TesseraError): void }>();
/** Set once the group is gone: runs waiting for a sum, and later ones, fail with it. */
let aborted: TesseraError | undefined;

let queue: Promise<void> = Promise.resolve();
port.on("message", (msg: ToShardThread) => {
  switch (msg.type) {
    case "reduced": {
      const key = `${msg.id}/${msg.segment}`;
      sums.get(key)?.resolve(msg.data);
      sums.delete(key);
      return;
    }
    case "abort":
      aborted = new TesseraError(Code.UNAVAILABLE, msg.message);
      for (const waiting of sums.values()) waiting.reject(aborted);
      sums.clear();
      return;
    default:
      queue = queue.then(() => handle(msg));
  }
});

function reduceFor(id: number) {
  return (segment: number, partial: Float32Array) =>
    new Promise<Float32Array>((resolve, reject) => {
      if (aborted) return reject(aborted);
      sums.set(`${id}/${segment}`, { resolve, reject });
      const data = partial.slice();
      post({ type: "reduce", id, segment, data }, [data.buffer as ArrayBuffer]);
    });
}

async function handle(msg: Exclude<ToShardThread, { type: "reduced" | "abort" }>): Promise<void> {
  try {
    switch (msg.type) {
      case "run": {
        const t0 = performance.now();
        const entry = msg.tokens ? { tokens: msg.tokens } : { hidden: msg.hidden ?? new Float32Array(0) };
        const data = await executor.run(msg.seqs, entry, reduceFor(msg.id));
        post({ type: "output", id: msg.id, data, runMs: performance.now() - t0 }, [
          data.buffer as ArrayBuffer,
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
