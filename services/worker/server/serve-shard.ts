// `tessera serve` for a worker of a parallel replica. Rank 0 (stage 0, tensor rank 0) serves
// tessera.v1.Inference like a single worker, with a ShardedRunner under its engine (serve.ts). Every
// other worker runs here: it loads its shard, serves the internal ShardLink streams and grpc.health.v1,
// and stops on a stop signal, or, with exit code 1, when its group fails (Kubernetes then restarts it
// into a new group, as every other member of the failed group does).
import type { Server as HttpServer } from "node:http";
import { hostPort, listening } from "../../kernel/listen-failure.ts";
import type { Logger } from "../../kernel/log.ts";
import { listeningPort, Metrics } from "../../kernel/telemetry/metrics.ts";
import { parseEngineConfig, poolBlocks } from "../engine/engine-config.ts";
import { quantizationLabel } from "../model/quantize-blocks.ts";
import { ShardMember } from "../parallel/shard-member.ts";
import { registerShardMetrics } from "../parallel/shard-metrics.ts";
import { selfRank } from "../parallel/shard-placement.ts";
import type { ServeConfig, ShardConfig } from "./serve-config.ts";
import { servedCheckpoint, widensWeights } from "./serve-model-flags.ts";

/** Serves a non-coordinator shard until `stop` resolves or the group fails. */
export async function serveShardMember(
  config: ServeConfig & { shard: ShardConfig },
  log: Logger,
  stop: Promise<unknown>,
): Promise<void> {
  const engine = parseEngineConfig({
    ...config.engine,
    ...(config.threads !== undefined && { threads: config.threads }),
  });
  const checkpoint = servedCheckpoint(config.modelDir, config);
  const model = checkpoint.config;
  const member = await listening(hostPort(config.host, config.port), "--port", () =>
    ShardMember.start({
      modelDir: config.modelDir,
      architectureOverride: config.architecture,
      ...(widensWeights(config.dtype, checkpoint.dtype) && { widenWeights: true }),
      ...(config.quantization && { quantization: config.quantization }),
      threads: engine.threads,
      numBlocks: poolBlocks(engine, model),
      blockSize: engine.blockSize,
      attention: engine.attention,
      placement: config.shard,
      host: config.host,
      port: config.port,
      log,
    }),
  );
  const { stage, tensorRank } = config.shard;
  log.info(
    { host: config.host, port: member.port, member: selfRank(config.shard), stage, tensorRank },
    "serving",
  );
  // What this shard keeps in memory, once the group is formed (the thread reports its graphs then).
  member.member.ready.then(
    (ready) =>
      log.info(
        { quantization: quantizationLabel(config.quantization), weightBytes: ready.graphBytes },
        "shard loaded",
      ),
    () => {},
  );
  let metricsServer: HttpServer | undefined;
  const metrics = config.metricsPort === undefined ? undefined : new Metrics();
  try {
    if (metrics && config.metricsPort !== undefined) {
      registerShardMetrics(metrics.meter("tessera.shard"), member.member);
      const { metricsPort } = config;
      metricsServer = await listening(hostPort(config.host, metricsPort), "--metrics-port", () =>
        metrics.serve(metricsPort, config.host),
      );
      log.info({ metricsPort: listeningPort(metricsServer) }, "metrics served at /metrics");
    }
    const outcome = await Promise.race([stop, member.member.failed]);
    // The group failed: exit with an error (code 1) so that the pod restarts into a new group.
    if (typeof outcome !== "string") throw outcome;
    log.info({ signal: outcome }, "stop signal received");
  } finally {
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    await metrics?.shutdown();
    await member.close();
  }
}
