// Tessera as a user runs it: `tessera serve` (with --quantization int8|int4 for those widths) over
// gRPC (tessera.v1.Inference/Generate, token-id prompts, greedy).
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { type Served, startServe } from "../../../services/cli/child-process.ts";
import { GrpcClient } from "../../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../../services/rpc/health-client.ts";
import { allAtOnce, type ConcurrentRun, type Peer, type SingleRun, TokenClock } from "./peer.ts";

export type Width = "fp32" | "int8" | "int4";

interface TokenMessage {
  tokens: { tokenId: number; logprob: number; topLogprobs: { tokenId: number; logprob: number }[] }[];
}

class ServedTessera implements Peer {
  readonly name: string;
  readonly how: string;
  private readonly client: GrpcClient;
  private readonly served: Served;

  constructor(width: Width, served: Served, threads: number) {
    this.served = served;
    this.name = `tessera ${width}`;
    this.how = `tessera serve --threads ${threads}${width === "fp32" ? "" : ` --quantization ${width}`}, gRPC`;
    this.client = new GrpcClient(served.address);
  }

  private stream(
    ids: number[],
    maxTokens: number,
    logprobs: number,
    clock: TokenClock,
    top?: SingleRun["top"],
  ) {
    return new Promise<number>((resolve, reject) => {
      const call = this.client.serverStream(Inference.method.generate, {
        prompt: { case: "tokenIds", value: { ids } },
        sampling: { maxTokens, ignoreEos: true, temperature: 0, logprobs },
      });
      call.on("data", (m: TokenMessage) => {
        clock.tokens(m.tokens.map((t) => t.tokenId));
        if (top)
          for (const t of m.tokens)
            top.push(t.topLogprobs.map((x) => ({ id: x.tokenId, logprob: x.logprob })));
      });
      call.on("end", () => resolve(clock.ids.length));
      call.on("error", reject);
    });
  }

  async single(prompt: number[], maxTokens: number, logprobs = 0): Promise<SingleRun> {
    const clock = new TokenClock();
    const top: NonNullable<SingleRun["top"]> = [];
    await this.stream(prompt, maxTokens, logprobs, clock, top);
    return { ...clock.result(), ...(logprobs > 0 && { top }) };
  }

  concurrent(prompts: number[][], maxTokens: number): Promise<ConcurrentRun> {
    return allAtOnce(prompts, (p) => this.stream(p, maxTokens, 0, new TokenClock()));
  }

  async close(): Promise<void> {
    this.client.close();
    this.served.child.kill("SIGTERM");
    await this.served.exited;
  }
}

/** Tessera at `width` on `modelDir` with `threads` engine threads, served as a user runs it. */
export async function startTessera(modelDir: string, width: Width, threads: number): Promise<Peer> {
  const args = ["--threads", String(threads), ...(width === "fp32" ? [] : ["--quantization", width])];
  const server = await startServe(modelDir, args);
  await waitUntilServing(server.address, 300_000);
  return new ServedTessera(width, server, threads);
}
