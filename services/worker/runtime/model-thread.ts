// The model thread: loads a checkpoint, builds its ONNX graph and runs it with onnxruntime-node.
// session.run blocks the thread it runs on, so it runs here and never on the event loop serving requests.
// The thread also owns the K/V caches, so only token ids go in and logits come out.
import { parentPort, workerData } from "node:worker_threads";
import * as ort from "onnxruntime-node";
import { TesseraError } from "../../common/errors.ts";
import {
  buildDecoderGraph,
  pastKeyName,
  pastValueName,
  presentKeyName,
  presentValueName,
} from "../graph/decoder-graph.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { attentionBias } from "./attention-bias.ts";
import type { FromModelThread, ModelThreadOptions, ToModelThread } from "./messages.ts";
import { SequenceKv } from "./sequence-kv.ts";

const port = parentPort!;
const options = workerData as ModelThreadOptions;
let graphBytes = 0;
const post = (m: FromModelThread, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);

const started = performance.now();
const checkpoint = describeCheckpoint(options.modelDir, options.architectureOverride);
const config = checkpoint.config;
const session = await createSession().catch((err: unknown) => {
  const e = TesseraError.from(err);
  post({ type: "error", id: undefined, code: e.code, message: e.message });
  process.exit(1);
});
const sequences = new Map<number, SequenceKv>();
post({ type: "ready", loadMs: performance.now() - started, graphBytes });

async function createSession(): Promise<ort.InferenceSession> {
  const weights = WeightStore.open(options.modelDir);
  const graph = buildDecoderGraph(config, checkpoint.architecture.weightNames(config), weights);
  graphBytes = graph.byteLength;
  const sessionOptions: ort.InferenceSession.SessionOptions = { graphOptimizationLevel: "all" };
  if (options.threads > 0) sessionOptions.intraOpNumThreads = options.threads;
  return ort.InferenceSession.create(graph, sessionOptions);
}

port.on("message", async (msg: ToModelThread) => {
  switch (msg.type) {
    case "step":
      try {
        const logits = await step(msg.seqId, msg.tokens, msg.startPosition);
        post({ type: "logits", id: msg.id, logits }, [logits.buffer as ArrayBuffer]);
      } catch (err) {
        const e = TesseraError.from(err);
        post({ type: "error", id: msg.id, code: e.code, message: e.message });
      }
      return;
    case "free":
      sequences.delete(msg.seqId);
      return;
    case "close":
      await session.release();
      port.close();
      return;
    default: {
      const never: never = msg;
      throw new Error(`unknown message ${JSON.stringify(never)}`);
    }
  }
});

async function step(seqId: number, tokens: number[], startPosition: number): Promise<Float32Array> {
  let kv = sequences.get(seqId);
  if (!kv) {
    kv = new SequenceKv(config.numLayers, config.numKvHeads, config.headDim, config.maxContext);
    sequences.set(seqId, kv);
  }
  if (startPosition !== kv.length)
    throw new Error(`sequence ${seqId} is at ${kv.length}, step starts at ${startPosition}`);
  const S = tokens.length;
  const P = kv.length;
  const feeds: Record<string, ort.Tensor> = {
    input_ids: new ort.Tensor("int64", BigInt64Array.from(tokens, BigInt), [1, S]),
    position_ids: new ort.Tensor(
      "int64",
      BigInt64Array.from(tokens, (_, i) => BigInt(P + i)),
      [1, S],
    ),
    attention_bias: new ort.Tensor("float32", attentionBias(P, S, config.slidingWindow), [1, 1, S, P + S]),
  };
  for (let l = 0; l < config.numLayers; l++) {
    const dims = [1, P, config.numKvHeads, config.headDim];
    feeds[pastKeyName(l)] = new ort.Tensor("float32", kv.pastKeys(l), dims);
    feeds[pastValueName(l)] = new ort.Tensor("float32", kv.pastValues(l), dims);
  }
  const out = await session.run(feeds);
  const keys: Float32Array[] = [];
  const values: Float32Array[] = [];
  for (let l = 0; l < config.numLayers; l++) {
    keys.push(out[presentKeyName(l)]!.data as Float32Array);
    values.push(out[presentValueName(l)]!.data as Float32Array);
  }
  kv.append(S, keys, values);
  return (out["logits"]!.data as Float32Array).slice();
}
