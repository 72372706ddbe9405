// A member's thread: loads its shard (sessions and KV pool), links to its peers, serves its links (a
// member other than rank 0) and runs every step that passes through it. Rank 0's thread also
// coordinates steps for its event loop (coordinator.ts). Everything on a step's path lives here, so
// a frame from a peer reaches the shard without a hop through another thread.
import { parentPort, workerData } from "node:worker_threads";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import { onnxOpsAttention } from "../graph/attention-onnx-ops.ts";
import { shardProblem } from "../graph/shard-graph.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { BACKENDS } from "../runtime/attention-selection.ts";
import { ShardExecutor } from "../runtime/shard-executor.ts";
import { Coordinator } from "./coordinator.ts";
import type { FromMember, MemberThreadOptions, ToMember } from "./member-messages.ts";
import { type MemberServer, startMemberServer } from "./member-server.ts";
import { hostsFileResolver } from "./peer-hosts.ts";
import { ShardGroup } from "./shard-group.ts";
import { groupKey, layerCoverageProblem, layoutOf, selfRank, shardSpec } from "./shard-placement.ts";
import { ShardStats } from "./shard-stats.ts";
import { StageWorker } from "./stage-worker.ts";

const port = parentPort!;
const o = workerData as MemberThreadOptions;
const post = (m: FromMember, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
const log = createLogger("shard", o.logLevel);
const stats = new ShardStats(o.stats);

let group: ShardGroup;
let executor: ShardExecutor;
let coordinator: Coordinator | undefined;
let server: MemberServer | undefined;
try {
  const checkpoint = describeCheckpoint(o.modelDir, o.architectureOverride);
  const { config } = checkpoint;
  const spec = shardSpec(o.placement, config.numLayers);
  const problem = shardProblem(config, spec);
  if (problem) throw new TesseraError(Code.INVALID_ARGUMENT, `shard: ${problem}`);
  const backend = o.attention === "auto" ? onnxOpsAttention : BACKENDS.find((b) => b.name === o.attention);
  if (!backend) throw new TesseraError(Code.INVALID_ARGUMENT, `attention: unknown backend ${o.attention}`);
  executor = await ShardExecutor.create(checkpoint, WeightStore.open(o.modelDir), backend, spec, o);
  group = new ShardGroup({
    layout: layoutOf(o.placement),
    self: selfRank(o.placement),
    peers: o.placement.peers,
    resolve: hostsFileResolver(o.placement.hostsFile),
    groupKey: groupKey(o.placement, checkpoint.revision, o),
    layers: spec.layers,
    formationTimeoutMs: o.placement.formationTimeoutMs,
    log,
    onSent: (kind, bytes) => stats.sent(kind, bytes),
  });
  if (group.self === 0) {
    const kvDims = {
      numLayers: config.numLayers,
      kvHeads: config.numKvHeads,
      headDim: config.headDim,
      blockSize: o.blockSize,
    };
    coordinator = new Coordinator({
      group,
      executor,
      stats,
      placement: o.placement,
      vocab: config.vocabSize,
      kvDims,
    });
  } else {
    new StageWorker({ group, executor, vocab: config.vocabSize, stats });
    server = await startMemberServer(group, o.listen?.host ?? "127.0.0.1", o.listen?.port ?? 0);
    post({ type: "listening", port: server.port });
  }
  group.ready.then(
    () => {
      const uncovered =
        group.self === 0 && layerCoverageProblem(group.layout, group.members, config.numLayers);
      if (uncovered) group.fail(uncovered);
      else
        post({
          type: "ready",
          attention: executor.attention,
          graphBytes: executor.graphBytes,
          segments: executor.numSegments,
        });
    },
    () => {},
  );
  group.failed.then((err) => post({ type: "failed", message: err.message }));
  group.start();
} catch (err) {
  const e = TesseraError.from(err);
  post({ type: "error", id: undefined, code: e.code, message: e.message });
  process.exit(1);
}

port.on("message", (msg: ToMember) => void handle(msg));

async function handle(msg: ToMember): Promise<void> {
  try {
    switch (msg.type) {
      case "step": {
        const { logits, tokens, runMs } = await rank0().step(msg.tokens, msg.seqs);
        post({ type: "logits", id: msg.id, logits, ...(tokens && { tokens }), runMs }, [
          logits.buffer as ArrayBuffer,
        ]);
        return;
      }
      case "export": {
        const data = await rank0().exportBlocks(msg.blocks);
        post({ type: "blocks", id: msg.id, data }, [data.buffer as ArrayBuffer]);
        return;
      }
      case "import":
        await rank0().importBlocks(msg.blocks, msg.data);
        post({ type: "done", id: msg.id });
        return;
      case "close":
        group.close();
        coordinator?.failAll(new TesseraError(Code.UNAVAILABLE, "the runner was closed"));
        server?.close();
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

function rank0(): Coordinator {
  if (!coordinator) throw new TesseraError(Code.FAILED_PRECONDITION, "only rank 0 coordinates steps");
  return coordinator;
}
