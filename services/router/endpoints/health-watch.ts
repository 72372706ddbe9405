// Active health checking: a grpc.health.v1 Watch stream on one endpoint. The server pushes its status
// whenever it changes (a draining worker turns NOT_SERVING at once); when the stream breaks the
// endpoint is UNREACHABLE and the watch is made again after a backoff (reset by a message). The call
// waits for the connection (wait-for-ready) rather than failing while the worker is away, so a worker
// that comes back is watched, and its SERVING seen, as soon as grpc-js reconnects to it (its reconnect
// backoff capped by the channel options, endpoint.ts), not after a backoff that grew while it was down. A
// server without the health service (UNIMPLEMENTED) is taken as SERVING: passive ejection still guards it
// (a watch of an optional service, such as the KV transfer path, says SERVICE_UNKNOWN instead).
import {
  type ChannelOptions,
  type ClientReadableStream,
  Metadata,
  makeGenericClientConstructor,
  type ServiceError,
} from "@grpc/grpc-js";
import { service as healthService } from "grpc-health-check";
import { Backoff, type BackoffConfig } from "../../kernel/backoff.ts";
import type { Clock } from "../../kernel/clock.ts";
import { Code } from "../../kernel/errors.ts";
import { type ClientSecurity, PLAINTEXT } from "../../rpc/grpc-client.ts";

const HealthClient = makeGenericClientConstructor(healthService, "grpc.health.v1.Health");

export type HealthStatus = "UNKNOWN" | "SERVING" | "NOT_SERVING" | "SERVICE_UNKNOWN" | "UNREACHABLE";

type WatchMethod = (
  request: { service: string },
  metadata: Metadata,
) => ClientReadableStream<{ status: HealthStatus }>;

export class HealthWatch {
  readonly #client: InstanceType<typeof HealthClient>;
  readonly #service: string;
  readonly #clock: Clock;
  readonly #backoff: Backoff;
  readonly #onStatus: (status: HealthStatus) => void;
  readonly #unimplemented: HealthStatus;
  #stream: ClientReadableStream<{ status: HealthStatus }> | undefined;
  #cancelTimer: (() => void) | undefined;
  #stopped = false;

  constructor(
    address: string,
    options: {
      service: string;
      backoff: BackoffConfig;
      clock: Clock;
      onStatus: (status: HealthStatus) => void;
      /** The status of a server without the health service (default SERVING). */
      unimplemented?: HealthStatus;
      /** Mutual TLS to the endpoint; default plaintext. */
      security?: ClientSecurity;
      /** Options of the channel (the endpoint's own, so that they share its connection). */
      channelOptions?: ChannelOptions;
    },
  ) {
    const { credentials, options: securityOptions } = options.security ?? PLAINTEXT;
    this.#client = new HealthClient(address, credentials, { ...options.channelOptions, ...securityOptions });
    this.#service = options.service;
    this.#clock = options.clock;
    this.#backoff = new Backoff(options.backoff);
    this.#onStatus = options.onStatus;
    this.#unimplemented = options.unimplemented ?? "SERVING";
  }

  start(): void {
    if (this.#stopped || this.#stream) return;
    const watch = this.#client["watch"] as WatchMethod;
    const metadata = new Metadata();
    metadata.setOptions({ waitForReady: true });
    const stream = watch.call(this.#client, { service: this.#service }, metadata);
    this.#stream = stream;
    stream.on("data", ({ status }: { status: HealthStatus }) => {
      this.#backoff.reset();
      this.#onStatus(status);
    });
    const broken = (err?: ServiceError) => {
      if (this.#stream !== stream) return;
      this.#stream = undefined;
      stream.removeAllListeners();
      stream.on("error", () => {});
      if (this.#stopped) return;
      if (err?.code === Code.UNIMPLEMENTED) return this.#onStatus(this.#unimplemented);
      this.#onStatus("UNREACHABLE");
      this.#cancelTimer = this.#clock.setTimer(this.#backoff.next(), () => this.start());
    };
    stream.on("error", broken);
    stream.on("end", () => broken());
  }

  stop(): void {
    this.#stopped = true;
    this.#cancelTimer?.();
    const stream = this.#stream;
    this.#stream = undefined;
    if (stream) {
      stream.removeAllListeners();
      stream.on("error", () => {});
      stream.cancel();
    }
    this.#client.close();
  }
}
