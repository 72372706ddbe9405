// The serving process: load the model, serve it (and /metrics when asked), and on SIGTERM or SIGINT
// drain and stop.
import type { Server as HttpServer } from "node:http";
import { hostPort, listening } from "../../kernel/listen-failure.ts";
import type { Logger } from "../../kernel/log.ts";
import { listeningPort, Metrics } from "../../kernel/telemetry/metrics.ts";
import { serverCredentials } from "../../rpc/tls-credentials.ts";
import { TlsFolder } from "../../rpc/tls-folder.ts";
import { Engine } from "../engine/engine.ts";
import type { RedisKvStore } from "../kv-transfer/redis-kv-store.ts";
import type { Checkpoint } from "../model/checkpoint.ts";
import { servedRevision } from "../model/quantize-blocks.ts";
import { registerShardMetrics } from "../parallel/shard-metrics.ts";
import { defaultVirtualEngines, isCoordinator } from "../parallel/shard-placement.ts";
import { ShardedRunner } from "../parallel/sharded-runner.ts";
import type { ModelRunnerOptions } from "../runtime/model-runner.ts";
import { InferenceServer } from "./inference-server.ts";
import { type ServeConfig, servedNameOf } from "./serve-config.ts";
import { servedCheckpoint, widensWeights } from "./serve-model-flags.ts";
import { serveShardMember } from "./serve-shard.ts";
import { servedSamplingDefaults } from "./served-sampling-defaults.ts";
import { engineLoad } from "./worker-load.ts";

const STOP_SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/**
 * Serves until a stop signal, then drains; resolves once everything is closed. A worker of a parallel
 * replica other than rank 0 serves only its shard (serve-shard.ts); rank 0 runs the engine over the
 * group, and when the group fails it stops serving at once (NOT_SERVING; in-flight requests fail with
 * UNAVAILABLE) and exits with code 1.
 */
export async function serve(config: ServeConfig, log: Logger): Promise<void> {
  // The group's links take the same TLS folder; each member thread opens it for itself.
  const shard = config.shard && { ...config.shard, ...(config.tls && { tls: config.tls }) };
  // Opened (and its files checked) before the model loads, so a bad Secret fails at once.
  const tls = config.tls && TlsFolder.openSetting(config.tls.dir, "--tls-dir", true, log);
  if (shard && !isCoordinator(shard)) {
    tls?.close();
    return serveShardMember({ ...config, shard }, log, nextSignal(STOP_SIGNALS));
  }
  const metrics = config.metricsPort === undefined ? undefined : new Metrics();
  let sharded: ShardedRunner | undefined;
  const startRunner = shard
    ? async (options: ModelRunnerOptions) => {
        sharded = await ShardedRunner.start({ ...options, placement: shard, log });
        return sharded;
      }
    : undefined;
  const checkpoint = servedCheckpoint(config.modelDir, config);
  const samplingDefaults = servedSamplingDefaults(checkpoint, config.generationConfig ?? "auto", log);
  const store = config.kv && (await openKvStore(config, checkpoint, metrics, log));
  const remoteKv = config.kv &&
    store && {
      tier: new (await import("../kv-transfer/redis-kv-tier.ts")).RedisKvTier(store),
      policy: config.kv.policy,
      readThrough: config.kv.readThrough,
      writeThrough: config.kv.writeThrough,
    };
  // A group keeps several batches in flight unless told otherwise (virtual engines).
  const engineConfig = shard
    ? { ...config.engine, virtualEngines: config.engine?.virtualEngines ?? defaultVirtualEngines(shard) }
    : config.engine;
  const engine = await Engine.load(
    config.modelDir,
    withThreads(
      {
        id: servedNameOf(config),
        log,
        ...(config.architecture && { architecture: config.architecture }),
        ...(widensWeights(config.dtype, checkpoint.dtype) && { widenWeights: true }),
        ...(config.quantization && { quantization: config.quantization }),
        ...(config.speculative && { speculative: config.speculative }),
        ...(engineConfig && { engine: engineConfig }),
        ...(metrics && { metrics }),
        ...(remoteKv && { remoteKv }),
        ...(startRunner && { startRunner }),
      },
      config.threads,
    ),
  );
  if (metrics && sharded) registerShardMetrics(metrics.meter("tessera.shard"), sharded.member);
  let metricsServer: HttpServer | undefined;
  try {
    if (metrics && config.metricsPort !== undefined) {
      const { metricsPort } = config;
      metricsServer = await listening(hostPort(config.host, metricsPort), "--metrics-port", () =>
        metrics.serve(metricsPort, config.host),
      );
      log.info({ metricsPort: listeningPort(metricsServer) }, "metrics served at /metrics");
    }
    const server = await listening(hostPort(config.host, config.port), "--port", () =>
      InferenceServer.start(engine, {
        host: config.host,
        port: config.port,
        drainTimeoutMs: config.drainTimeoutMs,
        log,
        ...(metrics && { meter: metrics.meter("tessera.server") }),
        modelInfo: {
          revision: servedRevision(checkpoint.revision, config.quantization),
          kvBlockSize: engine.config.blockSize,
          eosTokenIds: engine.eosTokenIds,
          samplingDefaults,
        },
        load: engineLoad(engine),
        ...(tls && { credentials: serverCredentials(tls) }),
      }),
    );
    if (store) {
      // The transfer path has its own health: a worker whose Redis is unreachable still serves
      // (recomputing), but the router must not pick it for disaggregated requests.
      const report = () => server.setServiceHealth(KV_TRANSFER_HEALTH, store.health.status === "SERVING");
      report();
      store.onHealth(report);
    }
    const outcome = await Promise.race([
      nextSignal(STOP_SIGNALS),
      sharded?.failed ?? new Promise<never>(() => {}),
    ]);
    if (typeof outcome === "string")
      log.info({ signal: outcome, inFlight: server.activeCalls }, "stop signal received");
    await server.shutdown();
    // The group failed: exit with an error (code 1) so that the pod restarts into a new group.
    if (typeof outcome !== "string") throw outcome;
  } finally {
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    await metrics?.shutdown();
    await engine.close();
    await store?.close();
    tls?.close();
  }
}

/** The health service name of the KV transfer path (grpc.health.v1). */
export const KV_TRANSFER_HEALTH = "tessera.v1.KvTransfer";

async function openKvStore(
  config: ServeConfig,
  checkpoint: Checkpoint,
  metrics: Metrics | undefined,
  log: Logger,
): Promise<RedisKvStore> {
  const { config: model } = checkpoint;
  // Imported here: a worker without a remote KV store never loads ioredis (issue 18, resident set).
  const { RedisKvStore } = await import("../kv-transfer/redis-kv-store.ts");
  const store = new RedisKvStore({
    config: config.kv!.redis,
    format: {
      modelId: servedNameOf(config),
      revision: servedRevision(checkpoint.revision, config.quantization),
      layerRange: { start: 0, end: model.numLayers },
      shape: { blockSize: config.engine?.blockSize ?? 16, kvHeads: model.numKvHeads, headDim: model.headDim },
    },
    ...(metrics && { metrics }),
    logger: log,
  });
  const health = await store.start();
  if (health.status !== "SERVING")
    log.warn({ reason: health.reason }, "KV store not serving; requests recompute or fail per policy");
  return store;
}

function withThreads<T extends object>(options: T, threads: number | undefined): T & { threads?: number } {
  return threads === undefined ? options : { ...options, threads };
}

/** The first of `signals` to arrive; its handlers are then removed, so a second signal kills at once. */
function nextSignal(signals: NodeJS.Signals[]): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const handler = (signal: NodeJS.Signals) => {
      for (const s of signals) process.off(s, handler);
      resolve(signal);
    };
    for (const s of signals) process.on(s, handler);
  });
}
