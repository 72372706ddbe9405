// Tessera as a user runs it: `tessera serve` over gRPC (tessera.v1.Inference/Generate, token-id
// prompts, greedy). A width the serve command cannot select yet (no --quantization flag on this
// branch) runs through the engine API in this process instead, with the same quantization the flag
// selects (ModelRunnerOptions.quantization); `how` says which.
import { Inference } from "../../../proto/gen/tessera/v1/inference_pb.js";
import { runTessera, type Served, startServe } from "../../../services/cli/child-process.ts";
import { greedySampling } from "../../../services/inference/sampling-params.ts";
import { GrpcClient } from "../../../services/rpc/grpc-client.ts";
import { waitUntilServing } from "../../../services/rpc/health-client.ts";
import { Engine } from "../../../services/worker/engine/engine.ts";
import type { QuantOptions } from "../../../services/worker/model/quantize-blocks.ts";
import { ModelRunner } from "../../../services/worker/runtime/model-runner.ts";
import { allAtOnce, type ConcurrentRun, type Peer, type SingleRun, TokenClock } from "./peer.ts";

export type Width = "fp32" | "int8" | "int4";

/** What `--quantization int8|int4` selects: symmetric blocks of 32 (the worker's defaults). */
export const QUANTIZATION: Readonly<Record<Exclude<Width, "fp32">, QuantOptions>> = {
  int8: { bits: 8, blockSize: 32, symmetric: true },
  int4: { bits: 4, blockSize: 32, symmetric: true },
};

/** Whether this checkout's `tessera serve` takes --quantization. */
export async function serveHasQuantization(): Promise<boolean> {
  const help = await runTessera(["serve", "--help"]);
  return help.stdout.includes("--quantization");
}

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

class InProcessTessera implements Peer {
  readonly name: string;
  readonly how: string;
  private nextId = 0;
  private readonly engine: Engine;

  constructor(width: Width, engine: Engine, threads: number) {
    this.engine = engine;
    this.name = `tessera ${width}`;
    this.how = `engine API in the bench process (Engine.load, ${threads} threads, ModelRunnerOptions.quantization ${JSON.stringify(width === "fp32" ? undefined : QUANTIZATION[width])}): this checkout's tessera serve has no --quantization flag`;
  }

  private async run(
    prompt: number[],
    maxTokens: number,
    logprobs: number,
    clock: TokenClock,
    top?: SingleRun["top"],
  ) {
    const sampling = greedySampling({ maxTokens, ignoreEos: true, logprobs });
    for await (const e of this.engine.generate({
      requestId: `peers-${this.nextId++}`,
      promptIds: prompt,
      sampling,
    })) {
      if (e.type !== "tokens") continue;
      clock.tokens(e.tokens.map((t) => t.tokenId));
      if (top) for (const t of e.tokens) top.push(t.top.map((x) => ({ id: x.tokenId, logprob: x.logprob })));
    }
    return clock.ids.length;
  }

  async single(prompt: number[], maxTokens: number, logprobs = 0): Promise<SingleRun> {
    const clock = new TokenClock();
    const top: NonNullable<SingleRun["top"]> = [];
    await this.run(prompt, maxTokens, logprobs, clock, top);
    return { ...clock.result(), ...(logprobs > 0 && { top }) };
  }

  concurrent(prompts: number[][], maxTokens: number): Promise<ConcurrentRun> {
    return allAtOnce(prompts, (p) => this.run(p, maxTokens, 0, new TokenClock()));
  }

  close(): Promise<void> {
    return this.engine.close();
  }
}

/** Tessera at `width` on `modelDir` with `threads` engine threads: served if it can be, else in process. */
export async function startTessera(
  modelDir: string,
  width: Width,
  threads: number,
  served: boolean,
): Promise<Peer> {
  if (served || width === "fp32") {
    const args = ["--threads", String(threads), ...(width === "fp32" ? [] : ["--quantization", width])];
    const server = await startServe(modelDir, args);
    await waitUntilServing(server.address, 300_000);
    return new ServedTessera(width, server, threads);
  }
  const quantization = QUANTIZATION[width];
  const engine = await Engine.load(modelDir, {
    threads,
    startRunner: (o) => ModelRunner.start({ ...o, quantization }),
  });
  return new InProcessTessera(width, engine, threads);
}
