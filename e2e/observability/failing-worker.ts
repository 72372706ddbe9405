// A worker endpoint that says it serves a model (ListModels answers as a real worker does) but fails
// every Generate with UNAVAILABLE before the first token, as a worker whose engine broke would: the
// router retries such a request elsewhere and ejects the endpoint.
import { Server, ServerCredentials, type ServerWritableStream } from "@grpc/grpc-js";
import {
  type GenerateRequest,
  type GenerateResponse,
  Inference,
  type ListModelsResponse,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../../services/kernel/errors.ts";
import { grpcServiceDefinition } from "../../services/rpc/grpc-service.ts";

export interface FailingWorker {
  address: string;
  /** Generate calls refused so far. */
  refused: number;
  close(): void;
}

export async function startFailingWorker(models: ListModelsResponse): Promise<FailingWorker> {
  const server = new Server();
  const state = { refused: 0 };
  const unimplemented = (_call: unknown, callback: (err: { code: number; details: string }) => void) =>
    callback({ code: Code.UNIMPLEMENTED, details: "not here" });
  server.addService(grpcServiceDefinition(Inference), {
    generate: (call: ServerWritableStream<GenerateRequest, GenerateResponse>) => {
      state.refused++;
      call.emit("error", { code: Code.UNAVAILABLE, details: "the engine is down" });
    },
    tokenize: unimplemented,
    listModels: (_call: unknown, callback: (err: null, value: ListModelsResponse) => void) =>
      callback(null, models),
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
      err ? reject(err) : resolve(p),
    ),
  );
  return {
    address: `127.0.0.1:${port}`,
    get refused() {
      return state.refused;
    },
    close: () => server.forceShutdown(),
  };
}
