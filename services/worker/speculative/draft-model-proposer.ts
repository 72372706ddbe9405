// Draft-model proposals: a smaller checkpoint with the target's tokenizer runs in a model thread of its
// own (a group of one, whatever the target's parallelism) over a KV pool of its own. Each round, every
// request first catches the draft up on the tokens it has not seen (the whole prompt the first time,
// then the one or two tokens the last verification added), then the draft decodes k - 1 more steps,
// all requests in one batch per step: k draft steps for k proposals. The draft's cache keeps the
// proposals it was fed; the next round keeps what the target accepted (the common prefix) and
// overwrites the rest. A greedy request takes the draft's argmax (a point mass); a sampled one draws from
// the draft's distribution under the request's temperature, min_p, top_k and top_p (penalties apply to
// the target only: any q keeps the output exact, verify-draft.ts), keyed by (seed, position).
import { readFileSync } from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { poolBlocks } from "../engine/engine-config.ts";
import type { EngineRequest } from "../engine/request.ts";
import { BlockPool } from "../kv/block-pool.ts";
import { emptyRequestKv, KvCacheManager, type RequestKv } from "../kv/kv-cache-manager.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { ModelRunner } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { CounterRng } from "../sampling/philox.ts";
import { logitStats, Sampler, type TokenDistribution } from "../sampling/sampler.ts";
import type { ProposalRequest, Proposer } from "./proposer.ts";
import type { SpeculativeConfig } from "./speculative-config.ts";
import type { SpeculativeContext } from "./start-speculative.ts";
import { DRAFT_DRAW } from "./verify-draft.ts";

/** What the draft holds for one request. */
interface DraftState {
  kv: RequestKv;
  /** Tokens whose K/V the draft's cache holds, positions 0.. in order. */
  fed: number[];
  /**
   * Knobs-only sampler of a sampled request, or of a greedy one with logit_bias (its biased argmax);
   * undefined: greedy, the draft's argmax.
   */
  sampler: Sampler | undefined;
  /** The draft's draws of a sampled request; undefined for a greedy one (point-mass proposals). */
  rng: CounterRng | undefined;
}

interface Round {
  request: EngineRequest;
  k: number;
  state: DraftState;
  tokens: number[];
  q: (TokenDistribution | undefined)[];
}

export class DraftModelProposer implements Proposer {
  readonly method = "draft_model";
  private readonly runner: ModelRunner;
  private readonly kv: KvCacheManager;
  private readonly vocab: number;
  private readonly maxContext: number;
  private readonly states = new Map<EngineRequest, DraftState>();

  private constructor(runner: ModelRunner, kv: KvCacheManager, vocab: number, maxContext: number) {
    this.runner = runner;
    this.kv = kv;
    this.vocab = vocab;
    this.maxContext = maxContext;
  }

  static async start(
    config: Extract<SpeculativeConfig, { method: "draft_model" }>,
    context: SpeculativeContext,
  ): Promise<DraftModelProposer> {
    const dir = config.model;
    let draft: ReturnType<typeof describeCheckpoint>;
    try {
      draft = describeCheckpoint(dir);
    } catch (err) {
      throw new TesseraError(
        Code.INVALID_ARGUMENT,
        `speculative_config.model: cannot load ${dir}: ${TesseraError.from(err).message}`,
      );
    }
    if (draft.config.vocabSize !== context.target.vocabSize)
      throw new TesseraError(
        Code.INVALID_ARGUMENT,
        `speculative_config.model: the draft's vocabulary (${draft.config.vocabSize}) is not the target's (${context.target.vocabSize})`,
      );
    if (!sameTokenizer(dir, context.targetDir))
      throw new TesseraError(
        Code.INVALID_ARGUMENT,
        `speculative_config.model: ${dir} has another tokenizer than the target (tokenizer.json vocabularies differ)`,
      );
    const numBlocks = poolBlocks(context.engine, draft.config);
    const runner = await ModelRunner.start({
      modelDir: dir,
      architectureOverride: undefined,
      threads: context.engine.threads,
      numBlocks,
      blockSize: context.engine.blockSize,
      attention: context.engine.attention,
    });
    context.log?.info({ draft: dir, numBlocks, attention: runner.attention }, "draft model loaded");
    const kv = new KvCacheManager(new BlockPool(numBlocks, context.engine.blockSize), "draft", false);
    return new DraftModelProposer(runner, kv, draft.config.vocabSize, draft.config.maxContext);
  }

  async propose(batch: readonly ProposalRequest[]): Promise<void> {
    const rounds: Round[] = [];
    for (const { request, k: wanted } of batch) {
      const k = Math.min(wanted, this.maxContext - request.numTokens);
      if (k <= 0) continue;
      const state = this.stateOf(request);
      let valid = commonPrefix(state.fed, request.tokens);
      if (valid >= request.numTokens) valid = request.numTokens - 1;
      state.fed.length = valid;
      if (!this.kv.allocate(state.kv, request.numTokens + k - 1)) {
        this.release(request);
        continue;
      }
      rounds.push({ request, k, state, tokens: [], q: [] });
    }
    for (let i = 0; rounds.some((r) => r.tokens.length < r.k); i++) {
      const live = rounds.filter((r) => r.tokens.length < r.k && !r.request.isFinished);
      if (live.length === 0) break;
      // Step 0 feeds each request's unseen tokens; step i > 0 the proposal of step i - 1.
      const inputs = live.map((r) =>
        i === 0 ? r.request.tokens.slice(r.state.fed.length) : [r.tokens.at(-1)!],
      );
      const ids = Int32Array.from(inputs.flat());
      const seqs: SequenceStep[] = live.map((r, b) => ({
        numPast: r.state.fed.length,
        numNew: inputs[b]!.length,
        blockTable: r.state.kv.blocks,
        needsLogits: true,
      }));
      const { logits } = await this.runner.step(ids, seqs);
      live.forEach((r, b) => {
        r.state.fed.push(...inputs[b]!);
        const position = r.request.numTokens + r.tokens.length;
        this.pick(r, logits.subarray(b * this.vocab, (b + 1) * this.vocab), position);
      });
    }
    for (const r of rounds)
      if (r.tokens.length > 0 && !r.request.isFinished)
        r.request.draft = r.state.rng ? { tokens: r.tokens, q: r.q } : { tokens: r.tokens };
  }

  /** The draft's token at `position`: its argmax for a greedy request, else a draw from its distribution. */
  private pick(r: Round, logits: Float32Array, position: number): void {
    const { sampler, rng } = r.state;
    if (!rng) {
      // Greedy: the argmax, after the request's logit_bias (a banned id would only be rejected).
      r.tokens.push(sampler ? sampler.distribution(logits, position).ids[0]! : logitStats(logits).argmax);
      return;
    }
    if (!sampler) throw new Error("a sampled draft without its sampler");
    const q = sampler.distribution(logits, position);
    const u = rng.uniform(position, DRAFT_DRAW);
    let acc = 0;
    let id = q.ids[q.ids.length - 1]!;
    for (let i = 0; i < q.ids.length; i++) {
      acc += q.probs[i]!;
      if (u < acc) {
        id = q.ids[i]!;
        break;
      }
    }
    r.tokens.push(id);
    r.q.push(q);
  }

  private stateOf(request: EngineRequest): DraftState {
    let state = this.states.get(request);
    if (!state) {
      const greedy = request.sampling.temperature === 0 || !Number.isFinite(1 / request.sampling.temperature);
      const sampler =
        greedy && request.sampling.logitBias === undefined
          ? undefined
          : new Sampler({
              ...request.sampling,
              repetitionPenalty: 1,
              presencePenalty: 0,
              frequencyPenalty: 0,
              minTokens: 0,
              seed: request.sampler.seed,
            });
      state = {
        kv: emptyRequestKv(),
        fed: [],
        sampler,
        rng: greedy ? undefined : new CounterRng(request.sampler.seed),
      };
      this.states.set(request, state);
    }
    return state;
  }

  release(request: EngineRequest): void {
    const state = this.states.get(request);
    if (!state) return;
    this.kv.free(state.kv);
    this.states.delete(request);
  }

  close(): Promise<void> {
    return this.runner.close();
  }
}

function commonPrefix(a: readonly number[], b: readonly number[]): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

/** Whether two checkpoints' tokenizer.json files hold the same model (vocabulary and merges). */
function sameTokenizer(a: string, b: string): boolean {
  const model = (dir: string) => {
    try {
      return JSON.stringify(
        (JSON.parse(readFileSync(path.join(dir, "tokenizer.json"), "utf8")) as { model?: unknown }).model,
      );
    } catch {
      return undefined;
    }
  };
  const ma = model(a);
  return ma !== undefined && ma === model(b);
}
