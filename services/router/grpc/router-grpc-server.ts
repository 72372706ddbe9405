// The router's gRPC front door: tessera.v1.Inference (router-inference-service.ts), grpc.health.v1
// and reflection, with a bound on the request message size. grpc-js serves them all but Generate,
// which the router serves on its HTTP/2 streams itself (rpc/http2-server-call.ts): grpc-js's per-call
// and per-message objects were a third of what outlived the router's young collections (issue 22).
// The port is our own HTTP/2 server's (rpc/h2/h2-front-door.ts), plaintext or TLS, with grpc-js
// behind it on loopback for the other methods: node:http2 keeps its server streams until a full GC,
// which made the router's mark-compacts long. shutdown() drains like a worker does: health turns
// NOT_SERVING, new calls are refused, calls in flight may finish until the drain timeout.
import { setTimeout as delay } from "node:timers/promises";
import { Server } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { tracingEnabled } from "../../kernel/telemetry/tracing.ts";
import { bind, servingStatuses } from "../../rpc/grpc-listen.ts";
import { grpcServiceDefinition } from "../../rpc/grpc-service.ts";
import { H2FrontDoor } from "../../rpc/h2/h2-front-door.ts";
import { InFlight } from "../../rpc/in-flight.ts";
import { addReflection } from "../../rpc/reflection.ts";
import type { TlsFolder } from "../../rpc/tls-folder.ts";
import { refuseUndecodableRequests } from "../../rpc/undecodable-request.ts";
import type { Router } from "../core/router.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import { generateStreamHandler, routerInferenceHandlers } from "./router-inference-service.ts";

/** How long the transport may take to close once no call is left (health watches linger), before it is forced. */
const CLOSE_TIMEOUT_MS = 2_000;

export interface RouterGrpcOptions {
  host: string;
  port: number;
  maxRequestBytes: number;
  log: Logger;
  metrics: RouterMetrics | undefined;
  /** The front door's TLS (with `clientAuth`, clients must present a certificate); default plaintext. */
  tls?: { folder: TlsFolder; clientAuth: boolean } | undefined;
}

export class RouterGrpcServer {
  readonly port: number;
  readonly inFlight: InFlight;
  readonly #server: Server;
  readonly #health: HealthImplementation;
  readonly #frontDoor: H2FrontDoor;

  private constructor(
    server: Server,
    health: HealthImplementation,
    inFlight: InFlight,
    port: number,
    frontDoor: H2FrontDoor,
  ) {
    this.#server = server;
    this.#health = health;
    this.inFlight = inFlight;
    this.port = port;
    this.#frontDoor = frontDoor;
  }

  static async start(router: Router, options: RouterGrpcOptions): Promise<RouterGrpcServer> {
    // Channelz off: nothing reads it, and with it grpc-js keeps 4 closures per call and a timestamp
    // per message sent, which a router streaming every token of every request pays for.
    const server = new Server({
      "grpc.max_receive_message_length": options.maxRequestBytes,
      "grpc.enable_channelz": 0,
      interceptors: [refuseUndecodableRequests],
    });
    const inFlight = new InFlight();
    // Generate is served on the front door's HTTP/2 streams, the rest by grpc-js behind it.
    server.addService(grpcServiceDefinition(Inference), routerInferenceHandlers(router, inFlight));
    const health = new HealthImplementation(servingStatuses("SERVING", Inference.typeName));
    health.addToServer(server);
    addReflection(server, ["tessera/v1/inference.proto"]);
    const generate = generateStreamHandler(router, inFlight, options.log, options.metrics, {
      maxRequestBytes: options.maxRequestBytes,
      tracing: tracingEnabled(),
    });
    const handlers = new Map([[`/${Inference.typeName}/Generate`, generate]]);
    const behind = await bind(server, "127.0.0.1", 0);
    try {
      const frontDoor = await H2FrontDoor.listen({
        host: options.host,
        port: options.port,
        handlers,
        behind: `http://127.0.0.1:${behind}`,
        onError: (err) => options.log.error({ err }, "gRPC front door: a stream's handler failed"),
        tls: options.tls,
      });
      return new RouterGrpcServer(server, health, inFlight, frontDoor.port, frontDoor);
    } catch (err) {
      server.forceShutdown();
      throw err;
    }
  }

  /** Refuses new calls, lets those in flight run until `deadline`, cancels the rest and closes. */
  async shutdown(deadline: Promise<void>): Promise<{ cancelled: number }> {
    for (const [service, status] of Object.entries(servingStatuses("NOT_SERVING", Inference.typeName)))
      this.#health.setStatus(service, status);
    const result = await this.inFlight.drain(
      deadline,
      new TesseraError(Code.UNAVAILABLE, "the router is shutting down"),
    );
    // The front door's connections get GOAWAY and close when their streams are done (health watches
    // linger: they are cut at the timeout), then grpc-js behind it closes.
    await this.#frontDoor.close(CLOSE_TIMEOUT_MS);
    const closed = new Promise<void>((resolve) => this.#server.tryShutdown(() => resolve()));
    const timeout = new AbortController();
    const forced = delay(CLOSE_TIMEOUT_MS, undefined, { signal: timeout.signal }).then(
      () => this.#server.forceShutdown(),
      () => {},
    );
    await Promise.race([closed, forced]);
    timeout.abort();
    return result;
  }
}
