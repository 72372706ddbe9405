// A gRPC server for one loaded model: the Inference service, health (grpc.health.v1) and reflection.
// shutdown() drains: health turns NOT_SERVING, new calls are refused, calls in flight may finish
// until the drain timeout, then the rest are cancelled and the server stops.
import { setTimeout as delay } from "node:timers/promises";
import { Server, type ServerCredentials } from "@grpc/grpc-js";
import type { Meter } from "@opentelemetry/api";
import { HealthImplementation } from "grpc-health-check";
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { WorkerLoad } from "../../../proto/gen/tessera/v1/load_pb.js";
import { Relay } from "../../../proto/gen/tessera/v1/relay_pb.js";
import type { ServedModel, ServedModelInfo } from "../../inference/served-model.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { tracingEnabled } from "../../kernel/telemetry/tracing.ts";
import { bind, servingStatuses } from "../../rpc/grpc-listen.ts";
import { grpcServiceDefinition } from "../../rpc/grpc-service.ts";
import { traceHandlers } from "../../rpc/grpc-tracing.ts";
import { InFlight } from "../../rpc/in-flight.ts";
import { addReflection } from "../../rpc/reflection.ts";
import { refuseUndecodableRequests } from "../../rpc/undecodable-request.ts";
import { InferenceService } from "./inference-service.ts";
import { RelayService } from "./relay-service.ts";
import { RpcMetrics } from "./rpc-metrics.ts";
import { type LoadReport, workerLoadHandlers } from "./worker-load.ts";

export interface InferenceServerOptions {
  host: string;
  /** 0 picks a free port; read it back from `port`. */
  port: number;
  /** How long calls in flight may run after shutdown starts before they are cancelled. */
  drainTimeoutMs: number;
  log: Logger;
  /** Where the service's call metrics go (see rpc-metrics.ts); none when unset. */
  meter?: Meter;
  /** What ListModels reports beside the model's description (revision, KV block size, eos ids). */
  modelInfo?: ServedModelInfo;
  /** Serves tessera.v1.WorkerLoad with these figures (routers balance on them); none when unset. */
  load?: () => LoadReport;
  /** Mutual TLS (services/rpc/tls-credentials.ts); default plaintext. */
  credentials?: ServerCredentials;
}

/** How long the transport may take to close once no call is left, before it is forced. */
const CLOSE_TIMEOUT_MS = 2_000;

export class InferenceServer {
  readonly port: number;
  readonly #server: Server;
  readonly #health: HealthImplementation;
  readonly #inFlight: InFlight;
  readonly #relay: RelayService;
  readonly #options: InferenceServerOptions;
  #shutdown: Promise<{ cancelled: number }> | undefined;

  private constructor(
    server: Server,
    health: HealthImplementation,
    inFlight: InFlight,
    relay: RelayService,
    port: number,
    options: InferenceServerOptions,
  ) {
    this.#server = server;
    this.#health = health;
    this.#inFlight = inFlight;
    this.#relay = relay;
    this.port = port;
    this.#options = options;
  }

  static async start(model: ServedModel, options: InferenceServerOptions): Promise<InferenceServer> {
    const server = new Server({ interceptors: [refuseUndecodableRequests] });
    const inFlight = new InFlight();
    const metrics = options.meter && new RpcMetrics(options.meter, () => inFlight.size);
    const inference = new InferenceService(model, inFlight, options.log, metrics, options.modelInfo);
    server.addService(
      grpcServiceDefinition(Inference),
      traceHandlers(Inference.typeName, inference.handlers(), {
        enabled: tracingEnabled(),
        prefix: "worker",
        methods: ["generate"],
      }),
    );
    const relay = new RelayService(inference, inFlight);
    server.addService(grpcServiceDefinition(Relay), relay.handlers());
    if (options.load)
      server.addService(
        grpcServiceDefinition(WorkerLoad),
        workerLoadHandlers(options.load, () => inFlight.size),
      );
    const health = new HealthImplementation(servingStatuses("SERVING", Inference.typeName));
    health.addToServer(server);
    addReflection(server);
    const port = await bind(server, options.host, options.port, {
      ...(options.credentials && { credentials: options.credentials }),
    });
    const tls = options.credentials?._isSecure() === true;
    options.log.info({ host: options.host, port, tls, model: model.description.id }, "serving");
    return new InferenceServer(server, health, inFlight, relay, port, options);
  }

  /** Number of calls in flight. */
  get activeCalls(): number {
    return this.#inFlight.size;
  }

  /** Sets the health of a named part of this server (e.g. "tessera.v1.KvTransfer"). */
  setServiceHealth(service: string, serving: boolean): void {
    this.#health.setStatus(service, serving ? "SERVING" : "NOT_SERVING");
  }

  /** Drains and stops the server; calling it again returns the same promise. */
  shutdown(): Promise<{ cancelled: number }> {
    this.#shutdown ??= this.#drainAndStop();
    return this.#shutdown;
  }

  async #drainAndStop(): Promise<{ cancelled: number }> {
    const { log, drainTimeoutMs } = this.#options;
    for (const [service, status] of Object.entries(servingStatuses("NOT_SERVING", Inference.typeName)))
      this.#health.setStatus(service, status);
    log.info({ inFlight: this.#inFlight.size, drainTimeoutMs }, "draining");
    const timeout = new AbortController();
    const deadline = delay(drainTimeoutMs, undefined, { signal: timeout.signal }).catch(() => {});
    const reason = new TesseraError(Code.UNAVAILABLE, "the server is shutting down");
    const result = await this.#inFlight.drain(deadline, reason);
    timeout.abort();
    await this.#close();
    log.info(result, "stopped");
    return result;
  }

  /** Closes the transport gracefully, forcing it when idle connections (e.g. health watches) linger. */
  async #close(): Promise<void> {
    this.#relay.endIdle();
    const closed = new Promise<void>((resolve) => this.#server.tryShutdown(() => resolve()));
    const timeout = new AbortController();
    const forced = delay(CLOSE_TIMEOUT_MS, undefined, { signal: timeout.signal }).then(
      () => this.#server.forceShutdown(),
      () => {},
    );
    await Promise.race([closed, forced]);
    timeout.abort();
  }
}
