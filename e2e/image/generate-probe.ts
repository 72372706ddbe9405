// Runs inside the image (mounted read-only at /app/e2e/image, `podman exec ... node e2e/image/generate-probe.ts`),
// on the container's loopback, since the container has no network: waits for `tessera serve`, then
// one greedy Generate, and prints {ids, text, finishReason} as JSON. It imports the image's own
// client code (relative imports resolve to /app's services and node_modules).
import { FinishReason, type GenerateResponse, Inference } from "../../proto/gen/tessera/v1/inference_pb.js";
import { GrpcClient } from "../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../services/rpc/health-client.ts";

const [address = "127.0.0.1:50051", prompt = "Once upon a time", maxTokens = "12"] = process.argv.slice(2);
await waitUntilServing(address, 60_000);
const client = new GrpcClient(address);
const ids: number[] = [];
let text = "";
let finishReason = "";
const stream = client.serverStream(Inference.method.generate, {
  prompt: { case: "text", value: prompt },
  sampling: { maxTokens: Number(maxTokens), ignoreEos: true },
});
for await (const message of stream as AsyncIterable<GenerateResponse>) {
  ids.push(...message.tokens.map((t) => t.tokenId));
  text += message.textDelta;
  if (message.finishReason !== FinishReason.UNSPECIFIED)
    finishReason = FinishReason[message.finishReason] ?? "";
}
client.close();
process.stdout.write(`${JSON.stringify({ ids, text, finishReason })}\n`);
