// One worker endpoint as the router knows it: its role (prefill, decode or both), its gRPC channel,
// the models it serves (from ListModels), its health and its KV transfer path's health (grpc.health.v1
// Watch), its passive outlier state, its latest load report, this router's requests in flight on it,
// and its time-to-first-token average.
import type { ChannelOptions } from "@grpc/grpc-js";
import type { ModelInfo } from "../../../proto/gen/tessera/v1/inference_pb.js";
import type { BackoffConfig } from "../../kernel/backoff.ts";
import type { Clock } from "../../kernel/clock.ts";
import { type ClientSecurity, GrpcClient } from "../../rpc/grpc-client.ts";
import type { Candidate, LoadReport } from "../routing/plugin.ts";
import { Ewma } from "./ewma.ts";
import type { HealthStatus } from "./health-watch.ts";
import { type OutlierConfig, OutlierDetector, type OutlierEvents } from "./outlier-detector.ts";
import { RelayChannel } from "./relay-channel.ts";

/** What a worker does for a model: whole generations, or one side of a disaggregated one. */
export const ENDPOINT_ROLES = ["both", "prefill", "decode"] as const;
export type EndpointRole = (typeof ENDPOINT_ROLES)[number];

export interface EndpointSpec {
  /** Stable name (pod name, or the address): the hash ring is built over names. */
  name: string;
  /** host:port of the worker's gRPC server. */
  address: string;
  /** Default "both" (colocated). */
  role?: EndpointRole | undefined;
}

export interface EndpointOptions {
  clock: Clock;
  outliers: OutlierConfig;
  /** Half-life of the time-to-first-token average. */
  latencyHalfLifeMs: number;
  /** A load report older than this is not trusted. */
  maxLoadAgeMs: number;
  /** How the router's channels to workers are secured (mutual TLS); default plaintext. */
  security?: ClientSecurity;
  /** grpc-js's own reconnect backoff of the endpoint's connection (default 500 ms doubling to 1 s). */
  reconnect?: BackoffConfig;
}

/**
 * The options of every channel to one worker (requests, relay, health watches): the same options
 * make grpc-js share one connection among them, so the health watch that sees a restarted worker
 * come back has connected the requests' channel too. Keepalive notices a dead peer; grpc-js's
 * reconnect backoff (1 s growing to 120 s by default) is capped so that a restarted worker is
 * reconnected within about a second of listening again. Channelz is off: nothing reads it, and it
 * costs the relay a timestamp per message and a tracker per call.
 */
export function endpointChannelOptions(
  reconnect: BackoffConfig = { initialMs: 500, maxMs: 1_000 },
): ChannelOptions {
  return {
    "grpc.keepalive_time_ms": 30_000,
    "grpc.keepalive_timeout_ms": 10_000,
    "grpc.enable_retries": 0,
    "grpc.enable_channelz": 0,
    "grpc.initial_reconnect_backoff_ms": reconnect.initialMs,
    "grpc.max_reconnect_backoff_ms": reconnect.maxMs,
  };
}

export class Endpoint {
  readonly name: string;
  readonly address: string;
  readonly client: GrpcClient;
  /** The stream this router's generations on the endpoint share (traced ones carry their context in it). */
  readonly relay: RelayChannel | undefined;
  readonly ttft: Ewma;
  readonly outliers: OutlierDetector;
  /** The models the endpoint serves; undefined until its ListModels answered. */
  models: ModelInfo[] | undefined;
  health: HealthStatus = "UNKNOWN";
  role: EndpointRole;
  /**
   * The health of its KV transfer path (tessera.v1.KvTransfer): SERVING when its Redis tier works,
   * SERVICE_UNKNOWN when it has none. Without health watching: SERVING for prefill and decode roles.
   */
  kvHealth: HealthStatus = "UNKNOWN";
  /** Requests this router is streaming from the endpoint. */
  inFlight = 0;
  #load: { report: LoadReport; at: number } | undefined;
  readonly #options: EndpointOptions;

  constructor(spec: EndpointSpec, options: EndpointOptions, events: OutlierEvents) {
    this.name = spec.name;
    this.address = spec.address;
    this.role = spec.role ?? "both";
    this.#options = options;
    // Many concurrent streams share one HTTP/2 connection.
    this.client = new GrpcClient(spec.address, endpointChannelOptions(options.reconnect), options.security);
    this.relay = new RelayChannel(spec.name, this.client);
    this.ttft = new Ewma(options.latencyHalfLifeMs, options.clock);
    this.outliers = new OutlierDetector(options.outliers, options.clock, events);
  }

  /** May take new requests: serving by its health and not ejected. */
  get eligible(): boolean {
    return this.health === "SERVING" && !this.outliers.ejected;
  }

  /** Can hand KV blocks over through the remote tier (write them, or read those others wrote). */
  get kvReady(): boolean {
    return this.kvHealth === "SERVING";
  }

  serves(modelId: string): boolean {
    return this.models?.some((m) => m.id === modelId) === true;
  }

  set load(report: LoadReport) {
    this.#load = { report, at: this.#options.clock.now() };
  }

  get candidate(): Candidate {
    const load = this.#load;
    const fresh = load !== undefined && this.#options.clock.now() - load.at <= this.#options.maxLoadAgeMs;
    return {
      name: this.name,
      inFlight: this.inFlight,
      load: fresh ? load.report : undefined,
      ttftMs: this.ttft.value,
    };
  }

  close(): void {
    this.outliers.close();
    this.relay?.close();
    this.client.close();
  }
}
