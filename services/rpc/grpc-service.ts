// Maps a protobuf-es service descriptor to a grpc-js ServiceDefinition, so grpc-js serves and calls
// services whose messages are protobuf-es messages (serialized with toBinary / fromBinary, or, for the
// messages streamed once per token, the hand-written codecs of stream-codecs.ts). A request that does not
// decode reaches no handler: the server's refuseUndecodableRequests interceptor refuses it
// (undecodable-request.ts).
import { type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2";
import type {
  handleBidiStreamingCall,
  handleClientStreamingCall,
  handleServerStreamingCall,
  handleUnaryCall,
  MethodDefinition,
  ServiceDefinition,
} from "@grpc/grpc-js";
import { asBuffer, STREAM_CODECS, type StreamCodec } from "./stream-codecs.ts";
import { decodeOrMark } from "./undecodable-request.ts";

/** The grpc-js handler type of one method, from its kind and message types. */
export type GrpcHandler<M> = M extends { methodKind: infer K; input: infer I; output: infer O }
  ? I extends DescMessage
    ? O extends DescMessage
      ? K extends "unary"
        ? handleUnaryCall<MessageShape<I>, MessageShape<O>>
        : K extends "server_streaming"
          ? handleServerStreamingCall<MessageShape<I>, MessageShape<O>>
          : K extends "client_streaming"
            ? handleClientStreamingCall<MessageShape<I>, MessageShape<O>>
            : handleBidiStreamingCall<MessageShape<I>, MessageShape<O>>
      : never
    : never
  : never;

/** A handler per method, keyed by the method's local name (e.g. `generate`). */
export type GrpcHandlers<T extends GenServiceMethods> = { [K in keyof T]: GrpcHandler<T[K]> };

/** The gRPC path of a method: `/tessera.v1.Inference/Generate`. */
export function grpcPath(method: { name: string; parent: { typeName: string } }): string {
  return `/${method.parent.typeName}/${method.name}`;
}

export function grpcMethodDefinition<I extends DescMessage, O extends DescMessage>(method: {
  name: string;
  parent: { typeName: string };
  methodKind: string;
  input: I;
  output: O;
}): MethodDefinition<MessageShape<I>, MessageShape<O>> {
  const codec = STREAM_CODECS.get(method.output.typeName) as StreamCodec<MessageShape<O>> | undefined;
  return {
    path: grpcPath(method),
    originalName: method.name,
    requestStream: method.methodKind === "client_streaming" || method.methodKind === "bidi_streaming",
    responseStream: method.methodKind === "server_streaming" || method.methodKind === "bidi_streaming",
    requestSerialize: (message) => asBuffer(toBinary(method.input, message)),
    requestDeserialize: (bytes) => decodeOrMark(method.input.typeName, () => fromBinary(method.input, bytes)),
    responseSerialize: codec
      ? (message) => codec.encode(message)
      : (message) => asBuffer(toBinary(method.output, message)),
    responseDeserialize: codec ? (bytes) => codec.decode(bytes) : (bytes) => fromBinary(method.output, bytes),
  };
}

/** The grpc-js ServiceDefinition of a generated service, keyed by method local names. */
export function grpcServiceDefinition<T extends GenServiceMethods>(
  service: GenService<T>,
): ServiceDefinition {
  return Object.fromEntries(
    service.methods.map((method) => [method.localName, grpcMethodDefinition(method)]),
  );
}
