import assert from "node:assert/strict";
import { create } from "@bufbuild/protobuf";
import { Server, ServerCredentials, type ServerWritableStream, type ServiceError } from "@grpc/grpc-js";
import { context, ROOT_CONTEXT, SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace";
import {
  type GenerateRequest,
  type GenerateResponse,
  GenerateResponseSchema,
  Inference,
  ListModelsResponseSchema,
  TokenizeResponseSchema,
} from "../../proto/gen/tessera/v1/inference_pb.js";
import { Code } from "../kernel/errors.ts";
import { REQUEST_ID_ATTRIBUTE, type Tracing, tesseraTracer } from "../kernel/telemetry/tracing.ts";
import { startTracing } from "../kernel/telemetry/tracing-start.ts";
import { GrpcClient } from "./grpc-client.ts";
import { grpcServiceDefinition } from "./grpc-service.ts";
import { extractFromCarrier, startClientSpan, startServerSpan, traceHandlers } from "./grpc-tracing.ts";

describe("gRPC trace context (traceparent in metadata)", () => {
  let tracing: Tracing;
  let exporter: InMemorySpanExporter;
  let server: Server;
  let client: GrpcClient;
  const seen: (string | undefined)[] = [];

  before(async () => {
    exporter = new InMemorySpanExporter();
    tracing = startTracing({ serviceName: "t", sampleRatio: 1, exportDelayMs: 1_000 }, { exporter });
    server = new Server();
    const handlers = {
      generate: (call: ServerWritableStream<GenerateRequest, GenerateResponse>) => {
        seen.push(call.metadata.get("traceparent")[0]?.toString());
        // The handler runs inside its SERVER span.
        tesseraTracer().startSpan("inside").end();
        if (call.request.model === "missing") {
          call.emit("error", { code: Code.NOT_FOUND, details: "no such model" });
          return;
        }
        call.write(create(GenerateResponseSchema, { requestId: call.request.requestId }));
        call.end();
      },
      tokenize: (_call: unknown, callback: (err: null, value: unknown) => void) =>
        callback(null, create(TokenizeResponseSchema, { tokenIds: [1] })),
      listModels: (_call: unknown, callback: (err: null, value: unknown) => void) =>
        callback(null, create(ListModelsResponseSchema, {})),
    };
    server.addService(
      grpcServiceDefinition(Inference),
      traceHandlers(Inference.typeName, handlers, {
        enabled: true,
        prefix: "worker",
        methods: ["generate", "tokenize"],
      }),
    );
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, p) =>
        err ? reject(err) : resolve(p),
      ),
    );
    client = new GrpcClient(`127.0.0.1:${port}`);
  });
  after(async () => {
    client.close();
    server.forceShutdown();
    await tracing.shutdown();
  });
  beforeEach(() => exporter.reset());

  const generate = (model = "") =>
    new Promise<void>((resolve, reject) => {
      const stream = client.serverStream(Inference.method.generate, { requestId: "req-7", model });
      stream.on("data", () => {});
      stream.on("end", resolve);
      stream.on("error", (err: ServiceError) => reject(err));
    });
  const spans = () => exporter.getFinishedSpans();
  const named = (name: string) => spans().find((s) => s.name === name);
  /** The request's span -> CLIENT span -> worker's SERVER span -> the handler's "inside" span. */
  const assertCallChain = (request: { spanContext(): { spanId: string } }) => {
    const clientSpan = named("tessera.v1.Inference/Generate");
    const serverSpan = named("worker tessera.v1.Inference/Generate");
    assert.equal(clientSpan?.kind, SpanKind.CLIENT);
    assert.equal(serverSpan?.kind, SpanKind.SERVER);
    assert.equal(clientSpan?.parentSpanContext?.spanId, request.spanContext().spanId);
    assert.equal(serverSpan?.parentSpanContext?.spanId, clientSpan?.spanContext().spanId);
    assert.equal(named("inside")?.parentSpanContext?.spanId, serverSpan?.spanContext().spanId);
    return { clientSpan, serverSpan };
  };

  it("a call inside a traced request: CLIENT span -> SERVER span -> handler's span, one trace, request id on each", async () => {
    const request = tesseraTracer().startSpan("router request");
    await context.with(trace.setSpan(ROOT_CONTEXT, request), () => generate());
    request.end();
    const { clientSpan, serverSpan } = assertCallChain(request);
    assert.ok(spans().every((s) => s.spanContext().traceId === request.spanContext().traceId));
    assert.match(seen.at(-1) ?? "", new RegExp(`^00-${request.spanContext().traceId}-[0-9a-f]{16}-01$`));
    for (const span of [clientSpan, serverSpan]) {
      assert.equal(span?.attributes[REQUEST_ID_ATTRIBUTE], "req-7");
      assert.equal(span?.attributes["rpc.grpc.status_code"], Code.OK);
    }
    assert.equal(named("router request")?.attributes[REQUEST_ID_ATTRIBUTE], "req-7");
  });

  it("a Relay generation traced by hand: the same CLIENT -> SERVER chain, its context in a carrier", () => {
    const path = "/tessera.v1.Inference/Generate";
    assert.equal(startClientSpan(path, "req-9"), undefined, "no span outside a recorded trace");
    const request = tesseraTracer().startSpan("router request");
    const call = context.with(trace.setSpan(ROOT_CONTEXT, request), () => startClientSpan(path, "req-9"));
    assert.ok(call);
    assert.match(call.carrier["traceparent"] ?? "", new RegExp(`^00-${request.spanContext().traceId}-`));
    const served = startServerSpan("worker", path, extractFromCarrier(call.carrier), "req-9");
    context.with(served.context, () => tesseraTracer().startSpan("inside").end());
    served.end(Code.UNAVAILABLE, "worker gone");
    served.end(Code.OK);
    call.end(Code.UNAVAILABLE, "worker gone");
    request.end();
    const { clientSpan, serverSpan } = assertCallChain(request);
    for (const span of [clientSpan, serverSpan]) {
      assert.equal(span?.attributes[REQUEST_ID_ATTRIBUTE], "req-9");
      assert.equal(span?.attributes["rpc.grpc.status_code"], Code.UNAVAILABLE, "the first end counts");
    }
    assert.equal(spans().filter((s) => s.name === serverSpan?.name).length, 1, "ended once");
  });

  it("a failed call ends both spans with its status", async () => {
    const request = tesseraTracer().startSpan("router request");
    await context.with(trace.setSpan(ROOT_CONTEXT, request), () =>
      assert.rejects(generate("missing"), { code: Code.NOT_FOUND }),
    );
    request.end();
    assert.equal(named("tessera.v1.Inference/Generate")?.attributes["rpc.grpc.status_code"], Code.NOT_FOUND);
    assert.equal(
      named("worker tessera.v1.Inference/Generate")?.attributes["rpc.grpc.status_code"],
      Code.NOT_FOUND,
    );
  });

  it("a call outside any trace carries no context and gets no CLIENT span; the server starts a trace for traced methods only", async () => {
    await client.unary(Inference.method.tokenize, { text: "hi" });
    await client.unary(Inference.method.listModels, {});
    assert.equal(seen.length, 2);
    assert.deepEqual(
      spans().map((s) => [s.name, s.parentSpanContext]),
      [["worker tessera.v1.Inference/Tokenize", undefined]],
    );
  });
});
