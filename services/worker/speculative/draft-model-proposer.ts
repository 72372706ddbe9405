// Draft-model proposals: a smaller checkpoint with the target's tokenizer runs in a thread of its own
// (draft-thread.ts) over a KV pool of its own, whose blocks this side allocates. Each round, every
// request first catches the draft up on the tokens it has not seen (the whole prompt the first time,
// then the one or two tokens the last verification added), then the draft decodes k - 1 more steps,
// all requests in one batch per step: k draft steps for k proposals, run back to back in the draft's
// thread (one round trip a round). The draft's cache keeps the proposals it was fed; the next round
// keeps what the target accepted (the common prefix) and overwrites the rest. How each request's
// proposals are picked (argmax, biased argmax, or draws under its knobs keyed by (seed, position)):
// draft-picker.ts.
import { readFileSync } from "node:fs";
import path from "node:path";
import { Code, TesseraError } from "../../kernel/errors.ts";
import { poolBlocks } from "../engine/engine-config.ts";
import type { EngineRequest } from "../engine/request.ts";
import { BlockPool } from "../kv/block-pool.ts";
import { emptyRequestKv, KvCacheManager, type RequestKv } from "../kv/kv-cache-manager.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import type { DraftPicking, DraftRow } from "./draft-messages.ts";
import { DraftWorker } from "./draft-worker.ts";
import type { ProposalRequest, Proposer } from "./proposer.ts";
import type { SpeculativeConfig } from "./speculative-config.ts";
import type { SpeculativeContext } from "./start-speculative.ts";

/** What the draft holds for one request. */
interface DraftState {
  /** The request's key in the draft's thread. */
  key: number;
  kv: RequestKv;
  /** Tokens whose K/V the draft's cache holds, positions 0.. in order. */
  fed: number[];
  /** How its proposals are picked; sent with its first round, then known to the thread by key. */
  picking: DraftPicking;
  opened: boolean;
}

export class DraftModelProposer implements Proposer {
  readonly method = "draft_model";
  private readonly worker: DraftWorker;
  private readonly kv: KvCacheManager;
  private readonly maxContext: number;
  private readonly states = new Map<EngineRequest, DraftState>();
  /** Keys of requests released since the last round: the thread drops their pickers with the next one. */
  private released: number[] = [];
  private nextKey = 1;

  private constructor(worker: DraftWorker, kv: KvCacheManager, maxContext: number) {
    this.worker = worker;
    this.kv = kv;
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
    const worker = await DraftWorker.start({
      modelDir: dir,
      threads: context.engine.threads,
      numBlocks,
      blockSize: context.engine.blockSize,
      attention: context.engine.attention,
    });
    context.log?.info(
      { draft: dir, numBlocks, attention: worker.attention, loadMs: Math.round(worker.loadMs) },
      "draft model loaded",
    );
    const kv = new KvCacheManager(new BlockPool(numBlocks, context.engine.blockSize), "draft", false);
    return new DraftModelProposer(worker, kv, draft.config.maxContext);
  }

  async propose(batch: readonly ProposalRequest[]): Promise<void> {
    const requests: EngineRequest[] = [];
    const rows: DraftRow[] = [];
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
      requests.push(request);
      rows.push({
        key: state.key,
        ...(!state.opened && { open: state.picking }),
        numPast: valid,
        feed: request.tokens.slice(valid),
        blockTable: state.kv.blocks,
        k,
      });
      state.opened = true;
    }
    if (rows.length === 0) return;
    const released = this.released;
    this.released = [];
    const { tokens, q } = await this.worker.propose(rows, released);
    requests.forEach((request, i) => {
      const proposals = tokens[i]!;
      const state = this.states.get(request);
      // A request that finished during the round was released (its blocks may be another's by now).
      if (!state || request.isFinished || proposals.length === 0) return;
      // The draft's cache now holds the fed tokens and every proposal but the last.
      state.fed.push(...rows[i]!.feed, ...proposals.slice(0, -1));
      const dists = q[i];
      request.draft = dists ? { tokens: proposals, q: dists } : { tokens: proposals };
    });
  }

  private stateOf(request: EngineRequest): DraftState {
    let state = this.states.get(request);
    if (!state) {
      state = {
        key: this.nextKey++,
        kv: emptyRequestKv(),
        fed: [],
        picking: pickingOf(request),
        opened: false,
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
    if (state.opened) this.released.push(state.key);
  }

  close(): Promise<void> {
    return this.worker.close();
  }
}

/**
 * A greedy request takes the draft's argmax (after its logit_bias, when it has one); a sampled one draws
 * under its own knobs and seed. Penalties and min_tokens stay the target's (any q keeps the output exact).
 */
function pickingOf(request: EngineRequest): DraftPicking {
  const { sampling } = request;
  const greedy = sampling.temperature === 0 || !Number.isFinite(1 / sampling.temperature);
  if (greedy && sampling.logitBias === undefined) return { kind: "argmax" };
  const params = {
    ...sampling,
    repetitionPenalty: 1,
    presencePenalty: 0,
    frequencyPenalty: 0,
    minTokens: 0,
    seed: request.sampler.seed,
  };
  return greedy ? { kind: "biased", params } : { kind: "sampled", params };
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
