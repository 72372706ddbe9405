// A small typed grpc-js client for protobuf-es services: `client.unary(Inference.method.tokenize, {...})`.
import {
  create,
  type DescMessage,
  type DescMethod,
  type MessageInitShape,
  type MessageShape,
} from "@bufbuild/protobuf";
import {
  type CallOptions,
  type ChannelCredentials,
  type ChannelOptions,
  Client,
  type ClientDuplexStream,
  type ClientReadableStream,
  credentials,
  Metadata,
} from "@grpc/grpc-js";
import { tracingEnabled } from "../kernel/telemetry/tracing.ts";
import { grpcMethodDefinition } from "./grpc-service.ts";
import { tracingInterceptor } from "./grpc-tracing.ts";
import { asBuffer } from "./stream-codecs.ts";

/** How a client secures its channel: credentials and the channel options that go with them. */
export interface ClientSecurity {
  credentials: ChannelCredentials;
  options: ChannelOptions;
}

export const PLAINTEXT: ClientSecurity = { credentials: credentials.createInsecure(), options: {} };

type Method<K extends DescMethod["methodKind"], I extends DescMessage, O extends DescMessage> = DescMethod & {
  methodKind: K;
  input: I;
  output: O;
};

export class GrpcClient {
  readonly #client: Client;

  /**
   * While tracing is on, calls made inside a traced request carry its context (W3C traceparent).
   * `security`: TLS credentials and their channel options (tls-credentials.ts); default plaintext.
   */
  constructor(address: string, options: ChannelOptions = {}, security: ClientSecurity = PLAINTEXT) {
    const interceptors = tracingEnabled() ? { interceptors: [tracingInterceptor] } : {};
    this.#client = new Client(address, security.credentials, {
      ...options,
      ...security.options,
      ...interceptors,
    });
  }

  unary<I extends DescMessage, O extends DescMessage>(
    method: Method<"unary", I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
    metadata: Metadata = new Metadata(),
  ): Promise<MessageShape<O>> {
    const def = grpcMethodDefinition(method);
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(
        def.path,
        def.requestSerialize,
        def.responseDeserialize,
        create(method.input, request),
        metadata,
        options,
        (err, response) => (err || response === undefined ? reject(err) : resolve(response)),
      );
    });
  }

  serverStream<I extends DescMessage, O extends DescMessage>(
    method: Method<"server_streaming", I, O>,
    request: MessageInitShape<I>,
    options: CallOptions = {},
    metadata: Metadata = new Metadata(),
  ): ClientReadableStream<MessageShape<O>> {
    const def = grpcMethodDefinition(method);
    return this.#client.makeServerStreamRequest(
      def.path,
      def.requestSerialize,
      def.responseDeserialize,
      create(method.input, request),
      metadata,
      options,
    );
  }

  /**
   * A bidirectional stream whose requests the caller writes already encoded (toBinary of the method's
   * input): it encodes each once, and knows before the write whether protobuf can encode it at all.
   */
  bidiStream<I extends DescMessage, O extends DescMessage>(
    method: Method<"bidi_streaming", I, O>,
    options: CallOptions = {},
    metadata: Metadata = new Metadata(),
  ): ClientDuplexStream<Uint8Array, MessageShape<O>> {
    const def = grpcMethodDefinition(method);
    return this.#client.makeBidiStreamRequest(def.path, asBuffer, def.responseDeserialize, metadata, options);
  }

  /** Resolves once the channel is connected, or rejects after `timeoutMs`. */
  waitForReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      this.#client.waitForReady(Date.now() + timeoutMs, (err) => (err ? reject(err) : resolve()));
    });
  }

  close(): void {
    this.#client.close();
  }
}
