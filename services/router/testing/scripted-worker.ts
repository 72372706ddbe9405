// An in-process stand-in for a worker, for router specs that need real gRPC streams but not a model:
// it serves tessera.v1.Inference where the token at each position of the context is script[position %
// script.length], so a continuation from "prompt + tokens so far" is exactly the rest of a whole
// generation (as with greedy decoding on a real model). It honours max_tokens, ignores stop strings
// (the router owns them), records every request, and can be told to fail a stream after some tokens,
// as a killed worker does.
import { create } from "@bufbuild/protobuf";
import {
  Metadata,
  Server,
  ServerCredentials,
  type ServerUnaryCall,
  type ServerWritableStream,
  type sendUnaryData,
  status,
} from "@grpc/grpc-js";
import {
  FinishReason,
  type GenerateRequest,
  type GenerateResponse,
  GenerateResponseSchema,
  Inference,
  ListModelsResponseSchema,
} from "../../../proto/gen/tessera/v1/inference_pb.js";
import { grpcServiceDefinition } from "../../rpc/grpc-service.ts";
import { SERVER_TIMING, serverTiming } from "../../rpc/server-timing.ts";
import { refuseUndecodableRequests } from "../../rpc/undecodable-request.ts";
import type { WorkerModelInfo } from "../models/router-model.ts";

export interface ScriptedWorkerOptions {
  modelId: string;
  info: WorkerModelInfo;
  /** The token at context position i is script[i % script.length]. */
  script: readonly number[];
}

export class ScriptedWorker {
  readonly requests: GenerateRequest[] = [];
  /** Streams after this many tokens fail with `failWith` (undefined: never). */
  failAfter: number | undefined;
  /** The status those streams fail with: UNAVAILABLE (the worker died) unless set. */
  failWith: status = status.UNAVAILABLE;
  /** Streams cancelled by the caller. */
  cancelled = 0;
  /** Handoffs (kv.await_writes) end saying their blocks could not be stored (a Redis down or hung). */
  kvWritesFail = false;
  /** What a finished stream's server-timing trailer says the worker took (ms), as a real worker's does. */
  workerMs = 7;
  readonly #server: Server;
  readonly address: string;

  private constructor(server: Server, address: string) {
    this.#server = server;
    this.address = address;
  }

  static async start(options: ScriptedWorkerOptions): Promise<ScriptedWorker> {
    const server = new Server({ interceptors: [refuseUndecodableRequests] });
    let worker: ScriptedWorker | undefined;
    server.addService(grpcServiceDefinition(Inference), {
      generate: (call: ServerWritableStream<GenerateRequest, GenerateResponse>) =>
        void worker?.stream(call, options.script),
      listModels: (_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        callback(
          null,
          create(ListModelsResponseSchema, {
            models: [
              {
                id: options.modelId,
                revision: options.info.revision,
                maxContext: options.info.maxContext,
                vocabSize: options.info.vocabSize,
                kvBlockSize: options.info.blockSize,
                eosTokenIds: [...options.info.eosTokenIds],
              },
            ],
          }),
        ),
      tokenize: (_call: ServerUnaryCall<unknown, unknown>, callback: sendUnaryData<unknown>) =>
        callback({ code: status.UNIMPLEMENTED, details: "not scripted" }),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    worker = new ScriptedWorker(server, `127.0.0.1:${port}`);
    return worker;
  }

  close(): void {
    this.#server.forceShutdown();
  }

  /** Serves one Generate call. */
  async stream(
    call: ServerWritableStream<GenerateRequest, GenerateResponse>,
    script: readonly number[],
  ): Promise<void> {
    const request = call.request;
    this.requests.push(request);
    const prompt = request.prompt.case === "tokenIds" ? request.prompt.value.ids : [];
    const maxTokens = request.sampling?.maxTokens ?? 16;
    let cancelled = false;
    call.on("cancelled", () => {
      cancelled = true;
      this.cancelled++;
    });
    for (let n = 0; n < maxTokens; n++) {
      await new Promise((resolve) => setImmediate(resolve));
      if (cancelled) return;
      if (this.failAfter !== undefined && n >= this.failAfter) {
        call.emit("error", { code: this.failWith, details: "scripted worker killed" });
        return;
      }
      const tokenId = script[(prompt.length + n) % script.length]!;
      call.write(create(GenerateResponseSchema, { requestId: request.requestId, tokens: [{ tokenId }] }));
    }
    const usage = { promptTokens: prompt.length, completionTokens: maxTokens };
    call.write(
      create(GenerateResponseSchema, {
        requestId: request.requestId,
        finishReason: FinishReason.LENGTH,
        usage: { ...usage, totalTokens: usage.promptTokens + usage.completionTokens },
        kvWritesFailed: this.kvWritesFail && request.kv?.awaitWrites === true,
      }),
    );
    const trailers = new Metadata();
    trailers.set(SERVER_TIMING, serverTiming({ worker: this.workerMs }));
    call.end(trailers);
  }
}
