// One measurement of the memory suite, in a process of its own so that its resident set holds one
// model: loads a checkpoint's whole-model graph into the executor a single process runs (onnx-ops
// attention, one thread), then decodes greedily at batch 1. Prints one JSON line: resident set size
// before the session, after it (weights loaded, garbage collected) and after decoding (onnxruntime's
// arena grown to a step's activations), and decode tokens per second of wall time and of the process's
// CPU time (one onnxruntime thread: the CPU time is the model's, and a busy machine inflates it less),
// then the CPU time of a 128-token prefill.
// Run with --expose-gc and GLIBC_TUNABLES fixing malloc's mmap and trim thresholds (memory.ts does),
// or memory freed during the load stays in the process and is counted as resident.
import { wholeModel } from "../../../services/worker/graph/shard-graph.ts";
import { describeCheckpoint } from "../../../services/worker/model/checkpoint.ts";
import { WeightStore } from "../../../services/worker/model/weights.ts";
import { BACKENDS } from "../../../services/worker/runtime/attention-selection.ts";
import { allocateShardPool, ShardExecutor } from "../../../services/worker/runtime/shard-executor.ts";

const [dir, warmDir, stepsArg = "64", roundsArg = "3"] = process.argv.slice(2);
if (!dir || !warmDir)
  throw new Error("usage: probe.ts <checkpoint dir> <tiny checkpoint dir> [steps] [rounds]");
const steps = Number(stepsArg);
const rounds = Number(roundsArg);
const PROMPT = 16;
const BLOCK = 16;
const PREFILL = 128;

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error("run with --expose-gc");
const settle = async () => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return process.memoryUsage().rss;
};

// A tiny model's session first: what any first session costs (onnxruntime's code pages, its global
// state) is then in `before`, and what the model's session adds is its weights and its graph.
const warm = describeCheckpoint(warmDir);
const warmSpec = wholeModel(warm.config.numLayers);
const backend = BACKENDS.find((b) => b.name === "onnx-ops")!;
const options = { blockSize: BLOCK, threads: 1, alone: true };
const warmPool = allocateShardPool(warm.config, warmSpec, 1, BLOCK);
await (
  await ShardExecutor.create(warm, WeightStore.open(warmDir), backend, warmSpec, warmPool, options)
).release();

const checkpoint = describeCheckpoint(dir);
const spec = wholeModel(checkpoint.config.numLayers);
const blocks = Math.ceil((Math.max(PROMPT + steps, PREFILL) + 1) / BLOCK);
const pool = allocateShardPool(checkpoint.config, spec, blocks, BLOCK);
const before = await settle();
const executor = await ShardExecutor.create(checkpoint, WeightStore.open(dir), backend, spec, pool, options);
const loaded = await settle();

const table = Array.from({ length: blocks }, (_, i) => i);
const wall: number[] = [];
const cpu: number[] = [];
for (let round = 0; round < rounds; round++) {
  let logits = await executor.run([{ numPast: 0, numNew: PROMPT, blockTable: table, needsLogits: true }], {
    tokens: Int32Array.from({ length: PROMPT }, (_, i) => 3 + ((i * 37) % 500)),
  });
  const t0 = performance.now();
  const c0 = process.cpuUsage();
  for (let s = 0; s < steps; s++) {
    let top = 0;
    for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[top]!) top = i;
    logits = await executor.run([{ numPast: PROMPT + s, numNew: 1, blockTable: table, needsLogits: true }], {
      tokens: Int32Array.of(top),
    });
  }
  wall.push(steps / ((performance.now() - t0) / 1000));
  const used = process.cpuUsage(c0);
  cpu.push(steps / ((used.user + used.system) / 1e6));
}
// Prefill: one step of 128 new tokens, tokens per CPU-second, best of `rounds`.
const prefill: number[] = [];
for (let round = 0; round < rounds; round++) {
  const c0 = process.cpuUsage();
  await executor.run([{ numPast: 0, numNew: PREFILL, blockTable: table, needsLogits: true }], {
    tokens: Int32Array.from({ length: PREFILL }, (_, i) => 3 + ((i * 53) % 500)),
  });
  const used = process.cpuUsage(c0);
  prefill.push(PREFILL / ((used.user + used.system) / 1e6));
}
const decoded = await settle();
await executor.release();
console.log(
  JSON.stringify({
    dtype: checkpoint.dtype,
    rssBefore: before,
    rssLoaded: loaded,
    rssDecoded: decoded,
    decodeTokPerS: wall,
    decodeTokPerCpuS: cpu,
    prefillTokPerCpuS: prefill,
  }),
);
