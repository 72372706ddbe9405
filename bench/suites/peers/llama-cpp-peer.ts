// llama.cpp through node-llama-cpp (its prebuilt CPU binaries), in this process, on a GGUF our own
// converter wrote from the same checkpoint (devtools/gguf/hf-to-gguf.ts). One context with a single
// sequence for batch-1 requests (so attention spans only that sequence's cells) and one with 16
// sequences for concurrent requests, which node-llama-cpp batches into shared llama_decode calls.
// Greedy (temperature 0); each request starts from a cleared sequence, as Tessera's prompts are all new.
import {
  getLlama,
  type Llama,
  type LlamaContext,
  LlamaLogLevel,
  type LlamaModel,
  type Token,
} from "node-llama-cpp";
import { allAtOnce, type ConcurrentRun, type Peer, type SingleRun, TokenClock } from "./peer.ts";

let shared: Promise<Llama> | undefined;

/** One llama.cpp instance for the process, CPU only, at most `threads` threads. */
function llamaCpp(threads: number): Promise<Llama> {
  // build "never": the prebuilt binaries npm installed, never a local build.
  shared ??= getLlama({ gpu: false, build: "never", maxThreads: threads, logLevel: LlamaLogLevel.error });
  return shared;
}

class LlamaCppPeer implements Peer {
  readonly how: string;
  readonly name: string;
  private readonly model: LlamaModel;
  private readonly one: LlamaContext;
  private readonly many: LlamaContext;

  constructor(
    name: string,
    llama: Llama,
    model: LlamaModel,
    one: LlamaContext,
    many: LlamaContext,
    threads: number,
  ) {
    this.name = name;
    this.model = model;
    this.one = one;
    this.many = many;
    const release = llama.llamaCppRelease;
    this.how = `node-llama-cpp (llama.cpp ${release.release}, ${llama.buildType} binary) in the bench process, CPU, ${threads} threads, flash attention ${String(one.flashAttention)}, batch size ${many.batchSize}`;
  }

  private async run(
    ctx: LlamaContext,
    prompt: number[],
    maxTokens: number,
    clock: TokenClock,
  ): Promise<number> {
    const seq = ctx.getSequence();
    try {
      for await (const token of seq.evaluate(prompt as Token[], { temperature: 0, yieldEogToken: true })) {
        clock.tokens([token as number]);
        if (clock.ids.length >= maxTokens) break;
      }
    } finally {
      seq.dispose();
    }
    return clock.ids.length;
  }

  async single(prompt: number[], maxTokens: number): Promise<SingleRun> {
    const clock = new TokenClock();
    await this.run(this.one, prompt, maxTokens, clock);
    return clock.result();
  }

  concurrent(prompts: number[][], maxTokens: number): Promise<ConcurrentRun> {
    return allAtOnce(prompts, (p) => this.run(this.many, p, maxTokens, new TokenClock()));
  }

  async close(): Promise<void> {
    await this.one.dispose();
    await this.many.dispose();
    await this.model.dispose();
  }
}

/**
 * llama.cpp's greedy ids for each prompt with its K/V cache kept in F32 (flash attention off): the
 * arithmetic closest to Tessera's float32 cache, for checking the conversion rather than llama.cpp's
 * default F16 cache (whose rounding moves near-ties; the speed runs keep that default).
 */
export async function llamaCppF32KvIds(
  modelPath: string,
  threads: number,
  prompts: number[][],
  n: number,
): Promise<number[][]> {
  const llama = await llamaCpp(threads);
  const model = await llama.loadModel({ modelPath });
  const context = await model.createContext({
    contextSize: 256,
    threads,
    flashAttention: false,
    experimentalKvCacheKeyType: "F32",
    experimentalKvCacheValueType: "F32",
  });
  try {
    const out: number[][] = [];
    for (const prompt of prompts) {
      const seq = context.getSequence();
      const ids: number[] = [];
      for await (const token of seq.evaluate(prompt as Token[], { temperature: 0, yieldEogToken: true })) {
        ids.push(token);
        if (ids.length >= n) break;
      }
      seq.dispose();
      out.push(ids);
    }
    return out;
  } finally {
    await context.dispose();
    await model.dispose();
  }
}

/** llama.cpp on `modelPath` with `threads` threads, room for `sequences` requests of `perSequence` tokens. */
export async function startLlamaCpp(
  name: string,
  modelPath: string,
  threads: number,
  sequences: number,
  perSequence: number,
): Promise<Peer> {
  const llama = await llamaCpp(threads);
  const model = await llama.loadModel({ modelPath });
  const one = await model.createContext({ contextSize: perSequence, sequences: 1, threads });
  const many = await model.createContext({ contextSize: perSequence, sequences, threads });
  return new LlamaCppPeer(name, llama, model, one, many, threads);
}
