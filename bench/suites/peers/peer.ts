// What the peer benchmark asks of each engine (Tessera, llama.cpp): one request timed from the call
// to its first and last token, and a set of requests at once timed to the last token of the last.
// Prompts are token ids, decoding is greedy and runs exactly `maxTokens` tokens (no stop on eos).

export interface TokenTop {
  id: number;
  logprob: number;
}

export interface SingleRun {
  /** Call to first token (prefill of the prompt and the first sampled token). */
  ttftMs: number;
  /** Tokens after the first, per second from the first token to the last. */
  decodeTokPerS: number;
  ids: number[];
  /** Each token's most likely alternatives, when asked for (Tessera only). */
  top?: TokenTop[][];
}

export interface ConcurrentRun {
  tokPerS: number;
  tokens: number;
  seconds: number;
}

export interface Peer {
  readonly name: string;
  /** How it was run, for the results. */
  readonly how: string;
  single(prompt: number[], maxTokens: number, logprobs?: number): Promise<SingleRun>;
  concurrent(prompts: number[][], maxTokens: number): Promise<ConcurrentRun>;
  close(): Promise<void>;
}

/** Collects token times while a stream runs. */
export class TokenClock {
  readonly start = performance.now();
  first = 0;
  last = 0;
  readonly ids: number[] = [];

  tokens(ids: readonly number[]): void {
    if (ids.length === 0) return;
    const now = performance.now();
    if (this.ids.length === 0) this.first = now;
    this.last = now;
    this.ids.push(...ids);
  }

  result(): SingleRun {
    const decodeSeconds = (this.last - this.first) / 1000;
    return {
      ttftMs: this.first - this.start,
      decodeTokPerS: decodeSeconds > 0 ? (this.ids.length - 1) / decodeSeconds : 0,
      ids: this.ids,
    };
  }
}

/** Runs every prompt at once through `one`, which resolves with the tokens it got. */
export async function allAtOnce(
  prompts: number[][],
  one: (prompt: number[]) => Promise<number>,
): Promise<ConcurrentRun> {
  const t0 = performance.now();
  const counts = await Promise.all(prompts.map(one));
  const seconds = (performance.now() - t0) / 1000;
  const tokens = counts.reduce((a, b) => a + b, 0);
  return { tokPerS: tokens / seconds, tokens, seconds };
}
