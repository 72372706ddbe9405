// The serving process: load the model, serve it (and /metrics when asked), and on SIGTERM or SIGINT
// drain and stop.
import type { Server as HttpServer } from "node:http";
import type { Logger } from "../../common/log.ts";
import { listeningPort, Metrics } from "../../common/telemetry/metrics.ts";
import { Engine } from "../engine/engine.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { InferenceServer } from "./inference-server.ts";
import type { ServeConfig } from "./serve-config.ts";
import { engineLoad } from "./worker-load.ts";

const STOP_SIGNALS: NodeJS.Signals[] = ["SIGTERM", "SIGINT"];

/** Serves until a stop signal, then drains; resolves once everything is closed. */
export async function serve(config: ServeConfig, log: Logger): Promise<void> {
  const metrics = config.metricsPort === undefined ? undefined : new Metrics();
  const engine = await Engine.load(
    config.modelDir,
    withThreads(
      { log, ...(config.engine && { engine: config.engine }), ...(metrics && { metrics }) },
      config.threads,
    ),
  );
  let metricsServer: HttpServer | undefined;
  try {
    if (metrics && config.metricsPort !== undefined) {
      metricsServer = await metrics.serve(config.metricsPort, config.host);
      log.info({ metricsPort: listeningPort(metricsServer) }, "metrics served at /metrics");
    }
    const server = await InferenceServer.start(engine, {
      host: config.host,
      port: config.port,
      drainTimeoutMs: config.drainTimeoutMs,
      log,
      ...(metrics && { meter: metrics.meter("tessera.server") }),
      modelInfo: {
        revision: describeCheckpoint(config.modelDir).revision,
        kvBlockSize: engine.config.blockSize,
        eosTokenIds: engine.eosTokenIds,
      },
      load: engineLoad(engine),
    });
    const signal = await nextSignal(STOP_SIGNALS);
    log.info({ signal, inFlight: server.activeCalls }, "stop signal received");
    await server.shutdown();
  } finally {
    metricsServer?.close();
    metricsServer?.closeAllConnections();
    await metrics?.shutdown();
    await engine.close();
  }
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
