// The demo (npm run demo, called by scripts/demo.sh): serve the trained reference model with
// `tessera serve`, stream a completion over gRPC printing tokens as they arrive, then SIGTERM.
import path from "node:path";
import type { GenerateResponse } from "../proto/gen/tessera/v1/inference_pb.js";
import { FinishReason, Inference } from "../proto/gen/tessera/v1/inference_pb.js";
import { startServe } from "../services/cli/child-process.ts";
import { GrpcClient } from "../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../services/rpc/health-client.ts";

const root = path.resolve(import.meta.dirname, "..");
// The trained reference model (devtools/reference/train_small_llama.py: a 21.9M-parameter Llama trained on
// the Brown corpus and the State of the Union addresses), so the demo's text reads like the language it
// learnt rather than the noise of random weights. `tessera model create` makes random checkpoints of any size (README).
const modelDir = path.join(root, "devtools", "reference", "trained-llama");
const prompt = "The President told the Congress that the country";
const say = (line: string) => process.stderr.write(`\x1b[2m${line}\x1b[0m\n`);

say(`serving the trained reference model in ${path.relative(root, modelDir)}`);
const served = await startServe(modelDir);
const client = new GrpcClient(served.address);
try {
  await waitUntilServing(served.address, 20_000);
  say(`serving on ${served.address}; health SERVING. Generate:`);
  process.stdout.write(prompt);
  const started = performance.now();
  let firstTokenMs = 0;
  let last: GenerateResponse | undefined;
  const stream = client.serverStream(Inference.method.generate, {
    prompt: { case: "text", value: prompt },
    sampling: { maxTokens: 64, temperature: 0.8, topP: 0.95, seed: 7n, ignoreEos: true },
  });
  for await (const message of stream as AsyncIterable<GenerateResponse>) {
    if (firstTokenMs === 0 && message.tokens.length > 0) firstTokenMs = performance.now() - started;
    process.stdout.write(message.textDelta);
    last = message;
  }
  const seconds = (performance.now() - started) / 1000;
  const tokens = last?.usage?.completionTokens ?? 0;
  const reason = FinishReason[last?.finishReason ?? FinishReason.UNSPECIFIED];
  process.stdout.write("\n");
  console.log(
    `${tokens} tokens in ${seconds.toFixed(2)} s: ${(tokens / seconds).toFixed(1)} tokens/s ` +
      `(first token after ${firstTokenMs.toFixed(0)} ms, finish ${reason})`,
  );
} finally {
  client.close();
  served.child.kill("SIGTERM");
  const code = await served.exited;
  say(`tessera serve stopped on SIGTERM with exit code ${code}`);
  if (code !== 0) process.exitCode = 1;
}
