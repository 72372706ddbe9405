// Assembles a router from its config: models (tokenizers, chat templates), the routing pipeline,
// the endpoint pool fed by discovery, the core, and the gRPC, HTTP and metrics servers.
import type { Server as HttpServer } from "node:http";
import { setTimeout as delay } from "node:timers/promises";
import { type Clock, systemClock } from "../kernel/clock.ts";
import { hostPort, listening } from "../kernel/listen-failure.ts";
import type { Logger } from "../kernel/log.ts";
import { listeningPort, Metrics } from "../kernel/telemetry/metrics.ts";
import { ApiKeys } from "./admission/api-keys.ts";
import { routerBatchExecutor } from "./batch/batch-executor.ts";
import { BatchJobs } from "./batch/batch-jobs.ts";
import { BatchStore } from "./batch/batch-store.ts";
import type { RouterConfig } from "./config/router-config.ts";
import { RouterTls } from "./config/router-tls.ts";
import { EndpointSelector } from "./core/endpoint-selector.ts";
import { Router } from "./core/router.ts";
import { createDiscovery } from "./discovery/create-discovery.ts";
import { describeEndpoint } from "./endpoints/describe-endpoint.ts";
import { EndpointPool } from "./endpoints/endpoint-pool.ts";
import { RouterGrpcServer } from "./grpc/router-grpc-server.ts";
import { RouterHttpServer } from "./http/router-http-server.ts";
import { RouterMetrics } from "./metrics/router-metrics.ts";
import { ModelRegistry } from "./models/model-registry.ts";
import { RouterModel } from "./models/router-model.ts";
import { createPlugins } from "./routing/routing-config.ts";
import { RoutingPipeline } from "./routing/routing-pipeline.ts";

export interface RunningRouter {
  router: Router;
  pool: EndpointPool;
  grpcPort: number;
  httpPort: number;
  metricsPort: number | undefined;
  /** Every model has an eligible endpoint that reported it (and its KV transfer health). */
  ready(): boolean;
  /** Drains (requests in flight may run `drainTimeoutMs`) and closes everything. */
  stop(drainTimeoutMs?: number): Promise<{ cancelled: number }>;
}

/** `env`: the process environment (read by Kubernetes discovery: KUBECONFIG, in-cluster service). */
export async function startRouter(
  config: RouterConfig,
  log: Logger,
  clock: Clock = systemClock,
  env: Record<string, string | undefined> = {},
): Promise<RunningRouter> {
  const models = new ModelRegistry(config.models.map((m) => RouterModel.load(m)));
  const plugins = createPlugins(config.routing, { random: Math.random, log });
  if (plugins.error) throw plugins.error;
  // TLS folders before anything starts: a bad Secret fails the start, naming its file.
  const tls = RouterTls.open(config.tls, log);
  const telemetry = config.metricsPort === undefined ? undefined : new Metrics();
  let pool: EndpointPool | undefined;
  let router: Router | undefined;
  const metrics =
    telemetry &&
    new RouterMetrics(telemetry, {
      endpointsInFlight: () =>
        (pool?.endpoints ?? []).map((e) => ({ endpoint: e.name, inFlight: e.inFlight })),
      queueDepths: () => router?.queueDepths ?? [],
    });
  metrics?.servingPathsFor(config.models.map((m) => m.id));
  const { health } = config;
  pool = new EndpointPool({
    clock,
    log,
    endpoint: {
      clock,
      outliers: config.outliers,
      latencyHalfLifeMs: health.latencyHalfLifeMs,
      maxLoadAgeMs: health.loadMaxAgeMs,
      security: tls.workerSecurity,
      reconnect: { initialMs: health.reconnectBaseMs, maxMs: health.reconnectMaxMs },
    },
    health: {
      watch: health.watch,
      service: health.service,
      kvService: health.kvService,
      reconnect: { initialMs: health.reconnectBaseMs, maxMs: health.reconnectMaxMs },
    },
    loadPollMs: health.loadPollMs,
    onChange: () => {
      models.update(pool?.endpoints ?? []);
      router?.endpointsChanged();
    },
    onEjected: (endpoint) => metrics?.ejected(endpoint),
  });
  const selector = new EndpointSelector(
    pool,
    new RoutingPipeline(plugins.value, metrics),
    config.routing.virtualNodes,
  );
  const { apiKeysFile, apiKeysReloadMs } = config.admission;
  const apiKeys =
    apiKeysFile === undefined
      ? undefined
      : ApiKeys.fromFile(apiKeysFile, clock, {
          intervalMs: apiKeysReloadMs,
          onChange: (outcome) => {
            if (outcome.error) log.error({ err: outcome.error.message }, "API keys file not reloaded");
            else log.info({ keys: outcome.value }, "API keys reloaded");
          },
        });
  // ioredis is loaded only by a router configured with a shared cache (the heap of every other
  // router would carry it: issue 22).
  const shared =
    config.cache.enabled && config.cache.redis ? await import("./cache/shared-response-cache.ts") : undefined;
  const sharedCache =
    shared && config.cache.redis
      ? new shared.SharedResponseCache(
          { ...config.cache.redis, password: shared.redisPassword(config.cache.redis.passwordEnv, env) },
          log.child({ component: "shared-cache" }),
        )
      : undefined;
  router = new Router({ models, selector, config, apiKeys, metrics, clock, log, sharedCache });
  const discovery = createDiscovery(config.discovery, log, env);
  // Ready: every model has an eligible endpoint, and every eligible endpoint has said whether its KV
  // transfer path works (so the first disaggregated request is routed as such).
  const ready = () =>
    models.models.every((m) => {
      const eligible = selector.eligible(m.id);
      return m.info !== undefined && eligible.length > 0 && eligible.every((e) => e.kvHealth !== "UNKNOWN");
    });
  let grpc: RouterGrpcServer | undefined;
  let http: RouterHttpServer | undefined;
  let metricsServer: HttpServer | undefined;
  const batchRouter = router;
  const jobs =
    config.batch.dir === undefined
      ? undefined
      : new BatchJobs(
          await BatchStore.open(config.batch.dir),
          (apiKey) => routerBatchExecutor(batchRouter, config.batch.priority, apiKey),
          config.batch.maxInFlight,
          log.child({ component: "batch" }),
        );
  try {
    await discovery.start((specs) => pool.update(specs));
    const shared = { host: config.host, maxRequestBytes: config.admission.maxRequestBytes, log, metrics };
    // Each listener that cannot start fails the whole start, naming its address and config field; what
    // started before it is closed (catch below), so nothing serves half started.
    const on = (port: number) => hostPort(config.host, port);
    grpc = await listening(on(config.grpcPort), "grpcPort", () =>
      RouterGrpcServer.start(router, { ...shared, port: config.grpcPort, tls: tls.frontDoorTls }),
    );
    http = await listening(on(config.httpPort), "httpPort", () =>
      RouterHttpServer.start(router, {
        ...shared,
        port: config.httpPort,
        ready,
        tls: tls.frontDoorTls,
        endpoints: () => pool.endpoints.map(describeEndpoint),
        batch: { jobs, maxFileBytes: config.batch.maxFileBytes },
      }),
    );
    // Batches a previous router left running go on (their journals say what is done).
    await jobs?.resume();
    const { metricsPort: wanted } = config;
    if (telemetry && wanted !== undefined)
      metricsServer = await listening(on(wanted), "metricsPort", () => telemetry.serve(wanted, config.host));
    const metricsPort = metricsServer && listeningPort(metricsServer);
    log.info(
      { grpcPort: grpc.port, httpPort: http.port, metricsPort, models: config.models.map((m) => m.id) },
      "routing",
    );
    const started = { grpc, http };
    const stop = async (drainTimeoutMs = config.drainTimeoutMs) => {
      const timeout = new AbortController();
      const deadline = delay(drainTimeoutMs, undefined, { signal: timeout.signal }).catch(() => {});
      // Running batches stop where they are, in_progress, for the next router to resume.
      await jobs?.stop();
      const [fromGrpc, fromHttp] = await Promise.all([
        started.grpc.shutdown(deadline),
        started.http.shutdown(deadline),
      ]);
      timeout.abort();
      await discovery.stop();
      await sharedCache?.close();
      apiKeys?.stop();
      pool.close();
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      await telemetry?.shutdown();
      tls.close();
      return { cancelled: fromGrpc.cancelled + fromHttp.cancelled };
    };
    return { router, pool, grpcPort: grpc.port, httpPort: http.port, metricsPort, ready, stop };
  } catch (err) {
    const now = Promise.resolve();
    await Promise.all([grpc?.shutdown(now), http?.shutdown(now)]);
    await discovery.stop();
    await sharedCache?.close();
    apiKeys?.stop();
    pool.close();
    metricsServer?.close();
    await telemetry?.shutdown();
    tls.close();
    throw err;
  }
}
