import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import {
  Client,
  credentials,
  Metadata,
  Server,
  ServerCredentials,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import {
  Inference,
  ListModelsResponseSchema,
  TokenizeResponseSchema,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { grpcServiceDefinition } from "./grpc-service.ts";
import { refuseUndecodableRequests } from "./undecodable-request.ts";

describe("undecodable requests", () => {
  let server: Server;
  let client: Client;
  const seen: unknown[] = [];

  before(async () => {
    server = new Server({ interceptors: [refuseUndecodableRequests] });
    server.addService(grpcServiceDefinition(Inference), {
      generate: (call: { request: unknown; end: () => void }) => {
        seen.push(call.request);
        call.end();
      },
      tokenize: (call: { request: unknown }, callback: (err: null, value: object) => void) => {
        seen.push(call.request);
        callback(null, create(TokenizeResponseSchema, {}));
      },
      listModels: (_call: unknown, callback: (err: null, value: object) => void) =>
        callback(null, create(ListModelsResponseSchema, {})),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    client = new Client(`127.0.0.1:${port}`, credentials.createInsecure());
  });
  after(() => {
    client?.close();
    server?.forceShutdown();
  });

  const identity = (b: Buffer) => b;
  const unary = (path: string, bytes: Buffer) =>
    new Promise<ServiceError | null>((resolve) =>
      client.makeUnaryRequest(path, identity, identity, bytes, new Metadata(), {}, (err) => resolve(err)),
    );

  it("refuses bytes that are not the message with INVALID_ARGUMENT naming `request`, before any handler", async () => {
    seen.length = 0;
    // A truncated field, and a string field that is not UTF-8 (grpc-js alone answers INTERNAL).
    for (const bytes of [Buffer.of(0xff, 0xff), Buffer.of(0x12, 0x02, 0xc3, 0x28)]) {
      const err = await unary("/tessera.v1.Inference/Tokenize", bytes);
      assert.equal(err?.code, status.INVALID_ARGUMENT);
      assert.match(err?.details ?? "", /^request: not a valid tessera\.v1\.TokenizeRequest: /);
      const stream = client.makeServerStreamRequest(
        "/tessera.v1.Inference/Generate",
        identity,
        identity,
        bytes,
        new Metadata(),
        {},
      );
      stream.on("error", () => {});
      const streamStatus = await new Promise<{ code: number }>((resolve) => stream.on("status", resolve));
      assert.equal(streamStatus.code, status.INVALID_ARGUMENT);
    }
    assert.deepEqual(seen, []);
  });

  it("passes a message that decodes to the handler", async () => {
    seen.length = 0;
    assert.equal(await unary("/tessera.v1.Inference/Tokenize", Buffer.of(0x12, 0x01, 0x61)), null);
    assert.equal((seen[0] as { text: string }).text, "a");
  });
});
