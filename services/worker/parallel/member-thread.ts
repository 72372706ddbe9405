// The model thread of every process: a member's thread, where a single process is the one member of a
// group of one. It loads its shard (sessions and KV pool; the whole model in a group of one, whose
// attention backend it races), links to its peers (none in a group of one), serves its links (a member
// other than rank 0) and runs every step that passes through it. Rank 0's thread also coordinates steps
// for its event loop (coordinator.ts). Everything on a step's path lives here, so a frame from a peer
// reaches the shard without a hop through another thread, and session.run never blocks an event loop
// that serves clients.
import { parentPort, workerData } from "node:worker_threads";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { createLogger } from "../../kernel/log.ts";
import { TlsFolder } from "../../rpc/tls-folder.ts";
import { type ShardSpec, shardProblem } from "../graph/shard-graph.ts";
import { type Checkpoint, describeCheckpoint } from "../model/checkpoint.ts";
import { WeightStore } from "../model/weights.ts";
import { attentionBackend, type Selection, selectAttention } from "../runtime/attention-selection.ts";
import { collectGarbage } from "../runtime/collect-garbage.ts";
import { allocateShardPool, ShardExecutor } from "../runtime/shard-executor.ts";
import { Coordinator } from "./coordinator.ts";
import { groupSize } from "./group-layout.ts";
import type { FromMember, MemberThreadOptions, ToMember } from "./member-messages.ts";
import type { MemberServer } from "./member-server.ts";
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
let tls: TlsFolder | undefined;
try {
  // The links' mutual TLS: this thread watches the folder itself (a TlsFolder does not cross threads).
  const tlsSettings = o.placement.tls;
  tls =
    tlsSettings &&
    TlsFolder.open(tlsSettings.dir, {
      needCa: true,
      onReloadError: (err) => log.error({ err: err.message }, "TLS folder not reloaded"),
    });
  const checkpoint = describeCheckpoint(o.modelDir, o.architectureOverride);
  const { config } = checkpoint;
  const spec = shardSpec(o.placement, config.numLayers);
  const problem = shardProblem(config, spec);
  if (problem) throw new TesseraError(Code.INVALID_ARGUMENT, `shard: ${problem}`);
  const selected = await loadShard(checkpoint, spec);
  executor = selected.executor;
  // The load's copies of the weights are garbage now; an idle thread might keep them for long.
  collectGarbage();
  // TLS and the member server (grpc-js) are loaded only where used: a single process's model thread
  // has neither, and its heap stays without them (issue 18).
  const credentials = tls && (await import("../../rpc/tls-credentials.ts"));
  group = new ShardGroup({
    layout: layoutOf(o.placement),
    self: selfRank(o.placement),
    peers: o.placement.peers,
    resolve: hostsFileResolver(o.placement.hostsFile),
    ...(tls && credentials && { security: credentials.clientSecurity(tls, o.placement.tls?.serverName) }),
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
    const { startMemberServer } = await import("./member-server.ts");
    server = await startMemberServer(
      group,
      o.listen?.host ?? "127.0.0.1",
      o.listen?.port ?? 0,
      tls && credentials?.serverCredentials(tls),
    );
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
          attentionTimings: selected.timings,
          attentionRejected: selected.rejected,
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

/**
 * The shard's executor. A group of one (a single process) races the attention backends on the whole
 * model; a member of a larger group takes the named one, onnx-ops for "auto" (its ranks would each
 * pick alone).
 */
async function loadShard(checkpoint: Checkpoint, spec: ShardSpec): Promise<Selection> {
  const weights = WeightStore.open(o.modelDir, {
    widen: o.widenWeights === true,
    ...(o.quantization && { quantization: o.quantization }),
  });
  if (groupSize(layoutOf(o.placement)) === 1) return selectAttention(checkpoint, weights, o);
  const pool = allocateShardPool(checkpoint.config, spec, o.numBlocks, o.blockSize);
  const options = { blockSize: o.blockSize, threads: o.threads, alone: false };
  const executor = await ShardExecutor.create(
    checkpoint,
    weights,
    attentionBackend(o.attention),
    spec,
    pool,
    options,
  );
  return { executor, timings: {}, rejected: {} };
}

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
        tls?.close();
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
