// The router's OpenAI-compatible HTTP front door: POST /v1/completions, POST /v1/chat/completions,
// GET /v1/models[/ID], GET /v1/endpoints (every worker endpoint with its role and health, what the
// router routes by), OpenAI's Files and Batch API (batch-routes.ts), and GET /health (alive) and /ready (every model has an eligible endpoint).
// Bodies are bounded (413 over admission.maxRequestBytes); a client that disconnects cancels its
// request upstream. shutdown() refuses new requests and lets those in flight finish until a deadline.
import http from "node:http";
import https from "node:https";
import type { AddressInfo } from "node:net";
import { samplingDefaultsByApiName } from "../../inference/sampling-params.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import { traceHttpListener } from "../../kernel/telemetry/http-tracing.ts";
import { tracingEnabled } from "../../kernel/telemetry/tracing.ts";
import { InFlight } from "../../rpc/in-flight.ts";
import { followFolder } from "../../rpc/tls-credentials.ts";
import type { TlsFolder } from "../../rpc/tls-folder.ts";
import type { BatchJobs } from "../batch/batch-jobs.ts";
import type { Router } from "../core/router.ts";
import type { EndpointDescription } from "../endpoints/describe-endpoint.ts";
import { bearer } from "../grpc/grpc-request.ts";
import type { RouterMetrics } from "../metrics/router-metrics.ts";
import type { RouterModel } from "../models/router-model.ts";
import { handleBatchRoute, isBatchRoute } from "./batch-routes.ts";
import { sendError, sendJson } from "./http-errors.ts";
import { answerError, handleGenerate } from "./openai-handler.ts";
import { readJson } from "./request-body.ts";

export interface RouterHttpOptions {
  host: string;
  port: number;
  maxRequestBytes: number;
  log: Logger;
  metrics: RouterMetrics | undefined;
  /** Every model has an eligible endpoint. */
  ready: () => boolean;
  /** The worker endpoints as GET /v1/endpoints lists them. */
  endpoints?: () => EndpointDescription[];
  /** HTTPS from a TLS folder (reloaded on rotation), asking for client certificates if `clientAuth`; default HTTP. */
  tls?: { folder: TlsFolder; clientAuth: boolean } | undefined;
  /** OpenAI's Files and Batch API (batch-routes.ts); unset: those routes answer 404. */
  batch?: { jobs: BatchJobs | undefined; maxFileBytes: number } | undefined;
}

export class RouterHttpServer {
  readonly port: number;
  readonly inFlight = new InFlight();
  readonly #server: http.Server;

  private constructor(server: http.Server) {
    this.#server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  static async start(router: Router, options: RouterHttpOptions): Promise<RouterHttpServer> {
    let self: RouterHttpServer | undefined;
    const listener = traceHttpListener((req, res) => void self?.handle(req, res, router, options), {
      enabled: tracingEnabled(),
      prefix: "router",
    });
    const secure = options.tls && followFolder(options.tls.folder, options.tls.clientAuth);
    // An https.Server is an http.Server on TLS sockets (Node mixes http.Server's methods into it).
    const server = secure
      ? (https.createServer(secure.options, listener) as unknown as http.Server)
      : http.createServer(listener);
    const unfollow = secure?.follow(server as unknown as https.Server);
    if (unfollow) server.once("close", unfollow);
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", (err) =>
        reject(
          new TesseraError(
            Code.UNAVAILABLE,
            `cannot listen on ${options.host}:${options.port}: ${err.message}`,
          ),
        ),
      );
      server.listen(options.port, options.host, () => resolve());
    });
    self = new RouterHttpServer(server);
    return self;
  }

  async handle(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    router: Router,
    options: RouterHttpOptions,
  ): Promise<void> {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    try {
      if (req.method === "GET" && path === "/health") return sendJson(res, 200, { status: "ok" });
      if (req.method === "GET" && path === "/ready")
        return sendJson(res, options.ready() ? 200 : 503, { ready: options.ready() });
      if (req.method === "GET" && path === "/v1/endpoints") {
        router.checkApiKey(bearer(req.headers.authorization));
        return sendJson(res, 200, { object: "list", data: options.endpoints?.() ?? [] });
      }
      if (req.method === "GET" && (path === "/v1/models" || path.startsWith("/v1/models/")))
        return this.#models(req, res, router, path);
      if (req.method === "POST" && path === "/v1/completions")
        return await this.#generate("completion", req, res, router, options);
      if (req.method === "POST" && path === "/v1/chat/completions")
        return await this.#generate("chat", req, res, router, options);
      if (isBatchRoute(path))
        return await handleBatchRoute(
          req,
          res,
          new URL(req.url ?? "/", "http://router"),
          router,
          options.batch?.jobs,
          {
            maxRequestBytes: options.maxRequestBytes,
            maxFileBytes: options.batch?.maxFileBytes ?? options.maxRequestBytes,
          },
        );
      sendError(res, TesseraError.notFound(`no route for ${req.method} ${path}`));
    } catch (err) {
      answerError(res, err);
    }
  }

  #models(req: http.IncomingMessage, res: http.ServerResponse, router: Router, path: string): void {
    router.checkApiKey(bearer(req.headers.authorization));
    // sampling_defaults: what an unset sampling field means (the workers' generation_config.json
    // defaults), once a worker has reported the model.
    const card = ({ id, info }: RouterModel) => ({
      id,
      object: "model",
      created: 0,
      owned_by: "tessera",
      ...(info && { sampling_defaults: samplingDefaultsByApiName(info.samplingDefaults ?? {}) }),
    });
    if (path === "/v1/models") {
      sendJson(res, 200, { object: "list", data: router.models.models.map(card) });
      return;
    }
    const model = router.models.resolve(decodeURIComponent(path.slice("/v1/models/".length)));
    if (model.error) throw model.error;
    sendJson(res, 200, card(model.value));
  }

  async #generate(
    kind: "completion" | "chat",
    req: http.IncomingMessage,
    res: http.ServerResponse,
    router: Router,
    options: RouterHttpOptions,
  ) {
    const started = performance.now();
    const controller = this.inFlight.begin();
    let outcome = { model: "", code: Code.OK as Code };
    const onClose = () => {
      if (!res.writableFinished) controller?.abort(new TesseraError(Code.CANCELLED, "the client went away"));
    };
    res.on("close", onClose);
    try {
      if (controller === undefined) throw new TesseraError(Code.UNAVAILABLE, "the router is shutting down");
      const body = await readJson(req, options.maxRequestBytes);
      outcome = await handleGenerate(kind, req, res, body, router, controller.signal);
    } catch (err) {
      outcome.code = answerError(res, controller?.signal.aborted ? controller.signal.reason : err);
    } finally {
      res.off("close", onClose);
      if (controller) this.inFlight.end(controller);
      options.metrics?.finished(outcome.model, "http", outcome.code, (performance.now() - started) / 1000);
    }
  }

  async shutdown(deadline: Promise<void>): Promise<{ cancelled: number }> {
    const result = await this.inFlight.drain(
      deadline,
      new TesseraError(Code.UNAVAILABLE, "the router is shutting down"),
    );
    this.#server.close();
    this.#server.closeAllConnections();
    return result;
  }
}
