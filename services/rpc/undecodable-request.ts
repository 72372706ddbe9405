// A request whose bytes are not its message type (truncated, a wrong wire type, invalid UTF-8 in a
// string field) is the client's mistake, so it is refused with INVALID_ARGUMENT naming `request`.
// grpc-js answers INTERNAL when a requestDeserialize throws, and gives the handler no say, so the
// services' deserializers (grpc-service.ts) hand back an UndecodableRequest instead of throwing, and
// the server interceptor below answers it before any handler sees it. Every server that serves a
// grpcServiceDefinition lists `refuseUndecodableRequests` in its interceptors.
import { Metadata, ServerInterceptingCall, type ServerInterceptor, status } from "@grpc/grpc-js";
import { statusDetails } from "./status-details.ts";

export class UndecodableRequest {
  readonly typeName: string;
  readonly reason: string;
  constructor(typeName: string, reason: string) {
    this.typeName = typeName;
    this.reason = reason;
  }
}

/** `decode(bytes)`, or an UndecodableRequest saying why it failed. */
export function decodeOrMark<T>(typeName: string, decode: () => T): T {
  try {
    return decode();
  } catch (err) {
    return new UndecodableRequest(typeName, (err as Error).message) as T;
  }
}

export const refuseUndecodableRequests: ServerInterceptor = (_method, call) => {
  let refused = false;
  return new ServerInterceptingCall(call, {
    start: (next) =>
      next({
        onReceiveMessage: (message, pass) => {
          if (message instanceof UndecodableRequest) {
            refused = true;
            call.sendStatus({
              code: status.INVALID_ARGUMENT,
              details: statusDetails(`request: not a valid ${message.typeName}: ${message.reason}`),
              metadata: new Metadata(),
            });
          } else if (!refused) pass(message);
        },
        // The handler never starts for a refused request (a unary handler would answer "no message").
        onReceiveHalfClose: (pass) => {
          if (!refused) pass();
        },
      }),
  });
};
