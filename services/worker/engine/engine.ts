// A loaded model ready to serve: the checkpoint's description and tokenizer on the event loop, the
// scheduler and KV bookkeeping beside them, and the weights, onnxruntime sessions and KV numbers in
// the model thread (ModelRunner: in a single process, the one member of a group of one).
import path from "node:path";
import { ChatTemplate } from "../../inference/chat-template.ts";
import type { GenerateEvent, GenerateRequest, ModelDescription } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { Metrics } from "../../kernel/telemetry/metrics.ts";
import { Tokenizer } from "../../tokenizer/tokenizer.ts";
import { BlockPool } from "../kv/block-pool.ts";
import { KvCacheManager } from "../kv/kv-cache-manager.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { type QuantOptions, quantizationLabel, servedRevision } from "../model/quantize-blocks.ts";
import { ModelRunner, type ModelRunnerOptions } from "../runtime/model-runner.ts";
import type { SpecDecoder } from "../speculative/spec-decoder.ts";
import type { SpeculativeConfig } from "../speculative/speculative-config.ts";
import { startSpeculative } from "../speculative/start-speculative.ts";
import { Grammars } from "../structured/grammars.ts";
import {
  type EngineConfig,
  type EngineConfigInput,
  kvBlockBytes,
  parseEngineConfig,
  poolBlocks,
} from "./engine-config.ts";
import { EngineCore } from "./engine-core.ts";
import { EngineMetrics } from "./engine-metrics.ts";
import { KvShare, splitBlocks } from "./kv-share.ts";
import { RemoteKv, type RemoteKvOptions } from "./remote-kv.ts";
import { EngineRequest } from "./request.ts";
import { Scheduler } from "./scheduler.ts";
import { mergeSequences } from "./sequence-events.ts";
import { VirtualEngines } from "./virtual-engines.ts";

export interface EngineOptions {
  /** Use this architecture instead of the one config.json names. */
  architecture?: string;
  /** Keep a 16-bit checkpoint's weights as float32 in memory (`--dtype float32`). */
  widenWeights?: boolean;
  /** Keep the projection matrices block-quantized (`--quantization int8|int4`). */
  quantization?: QuantOptions;
  /** The model id clients use (default: the folder's name). */
  id?: string;
  engine?: EngineConfigInput;
  /** onnxruntime intra-op threads (shorthand for engine.threads). */
  threads?: number;
  metrics?: Metrics;
  /** A remote KV tier (Redis) for disaggregated prefill/decode, a shared prefix tier and migration. */
  remoteKv?: RemoteKvOptions;
  log?: Logger;
  /** Speculative decoding (`--speculative-config`, parsed by parseSpeculativeConfig). */
  speculative?: SpeculativeConfig;
  /**
   * Starts the runner (default ModelRunner.start: the whole model in a thread of this process, a group
   * of one; rank 0 of a parallel replica passes ShardedRunner.start with its placement).
   */
  startRunner?: (options: ModelRunnerOptions) => Promise<ModelRunner>;
}

/** What `--quantization` quantizes (graph/graph-weights.ts: every matrix product goes through `linear`). */
const QUANTIZED_WEIGHTS =
  "every projection matrix (attention, MLP, experts, MoE router) and lm_head; embeddings and norms as stored";

export class Engine {
  readonly description: ModelDescription;
  readonly tokenizer: Tokenizer;
  /** The checkpoint's chat template (for chat prompts sent to this worker); undefined when it has none. */
  readonly chatTemplate: ChatTemplate | undefined;
  /** Token ids that end a generation unless ignore_eos. */
  readonly eosTokenIds: readonly number[];
  readonly config: EngineConfig;
  /** The attention backend in use and the timings that chose it. */
  readonly attention: { backend: string; timingsMs: Record<string, number> };
  readonly pool: BlockPool;
  /** The scheduling loops (one unless engine.virtualEngines says more), with their queues summed. */
  readonly engines: VirtualEngines;
  readonly remote: RemoteKv | undefined;
  /** Speculative decoding, when configured (its stats: proposed and accepted tokens). */
  readonly speculative: SpecDecoder | undefined;
  /** Structured outputs: the model's grammars (its vocabulary prepared on the first constrained request). */
  readonly grammars: Grammars;
  private readonly runner: ModelRunner;
  private nextOrder = 0;

  private constructor(
    parts: Pick<
      Engine,
      | "description"
      | "tokenizer"
      | "chatTemplate"
      | "eosTokenIds"
      | "config"
      | "pool"
      | "engines"
      | "remote"
      | "speculative"
      | "grammars"
    > & {
      runner: ModelRunner;
    },
  ) {
    this.description = parts.description;
    this.tokenizer = parts.tokenizer;
    this.chatTemplate = parts.chatTemplate;
    this.eosTokenIds = parts.eosTokenIds;
    this.config = parts.config;
    this.pool = parts.pool;
    this.engines = parts.engines;
    this.remote = parts.remote;
    this.speculative = parts.speculative;
    this.grammars = parts.grammars;
    this.runner = parts.runner;
    this.attention = { backend: parts.runner.attention, timingsMs: { ...parts.runner.attentionTimings } };
  }

  static async load(modelDir: string, options: EngineOptions = {}): Promise<Engine> {
    const config = parseEngineConfig({
      ...options.engine,
      ...(options.threads !== undefined ? { threads: options.threads } : {}),
    });
    const checkpoint = describeCheckpoint(modelDir, options.architecture);
    const tokenizer = Tokenizer.fromFile(modelDir);
    const chatTemplate = ChatTemplate.fromModelDir(modelDir);
    const model = checkpoint.config;
    const numBlocks = poolBlocks(config, model);
    const runner = await (options.startRunner ?? ModelRunner.start)({
      modelDir,
      architectureOverride: options.architecture,
      ...(options.widenWeights && { widenWeights: true }),
      ...(options.quantization && { quantization: options.quantization }),
      threads: config.threads,
      numBlocks,
      blockSize: config.blockSize,
      attention: config.attention,
    });
    const description: ModelDescription = {
      id: options.id ?? path.basename(path.resolve(modelDir)),
      architecture: model.architecture,
      maxContext: model.maxContext,
      vocabSize: model.vocabSize,
      dtype: options.widenWeights ? "float32" : checkpoint.dtype,
    };
    const pool = new BlockPool(numBlocks, config.blockSize);
    // Blocks computed from quantized weights are not the float ones: a worker of the other kind sharing
    // the remote KV tier (a rollout that changes the quantization) must not take them.
    const salt = `${description.id}@${servedRevision(checkpoint.revision, options.quantization)}`;
    const remote = options.remoteKv
      ? new RemoteKv(options.remoteKv, { pool, runner, salt, ...(options.log && { log: options.log }) })
      : undefined;
    // Dynamic rope rotates a prompt's keys for that prompt's length (runtime/step-inputs.ts), so a block
    // one request computed is not what another with the same tokens needs: nothing is shared.
    const shareable = model.ropeScaling.type !== "dynamic";
    if (!shareable && config.enablePrefixCaching)
      options.log?.info(
        { rope: "dynamic" },
        "prefix caching is off: dynamic rope keys depend on the prompt's length",
      );
    const schedulers = virtualSchedulers(
      { ...config, enablePrefixCaching: config.enablePrefixCaching && shareable },
      pool,
      salt,
    );
    const info = {
      model: description.id,
      blockSize: config.blockSize,
      numBlocks,
      attentionBackend: runner.attention,
    };
    const metrics = options.metrics
      ? new EngineMetrics(options.metrics, info, pool, schedulers, remote)
      : undefined;
    const speculative = options.speculative
      ? await startSpeculative(options.speculative, {
          target: description,
          targetDir: modelDir,
          engine: config,
          log: options.log,
        })
      : undefined;
    if (speculative && options.metrics)
      speculative.stats.observe(options.metrics, description.id, speculative.proposer.method);
    const cores = schedulers.map(
      (scheduler) =>
        new EngineCore({
          runner,
          scheduler,
          kv: scheduler.kv,
          metrics,
          limits: { maxContext: model.maxContext, eosTokenIds: checkpoint.eosTokenIds },
          vocabSize: model.vocabSize,
          log: options.log,
          remote,
          spec: speculative,
        }),
    );
    options.log?.info(
      {
        model: description,
        loadMs: Math.round(runner.loadMs),
        numBlocks,
        // What the process is expected to hold: the weights as its graph holds them and the KV pool
        // (bench/suites/engine.ts compares the resident set with their sum).
        ...(runner.graphBytes !== undefined && { weightBytes: runner.graphBytes }),
        kvPoolBytes: numBlocks * kvBlockBytes(config, model),
        virtualEngines: cores.length,
        attention: runner.attention,
        attentionTimingsMs: runner.attentionTimings,
        quantization: quantizationLabel(options.quantization),
        ...(options.speculative && { speculative: options.speculative }),
        ...(options.quantization && { quantized: QUANTIZED_WEIGHTS }),
      },
      "model loaded",
    );
    return new Engine({
      description,
      tokenizer,
      chatTemplate,
      eosTokenIds: checkpoint.eosTokenIds,
      config,
      pool,
      engines: new VirtualEngines(schedulers, cores),
      remote,
      speculative,
      grammars: new Grammars({ modelDir, vocabSize: model.vocabSize, eosTokenIds: checkpoint.eosTokenIds }),
      runner,
    });
  }

  /**
   * Streams the completion of one request; throws INVALID_ARGUMENT before any event for a bad prompt.
   * With n or best_of > 1 its sequences fork from one prefill (fork.ts) and stream as one (each event
   * tagged with its index, sequence-events.ts).
   */
  generate(request: GenerateRequest, signal?: AbortSignal): AsyncIterable<GenerateEvent> {
    validatePrompt(request.promptIds, this.description);
    if (signal?.aborted) throw new TesseraError(Code.CANCELLED, `request ${request.requestId} was cancelled`);
    const { sampling } = request;
    const n = sampling.n ?? 1;
    const count = Math.max(n, sampling.bestOf ?? n);
    const sequences = Array.from({ length: count }, (_, index) => this.sequence(request, index));
    const cancel = () => {
      for (const r of sequences) r.cancelRequested = true;
    };
    signal?.addEventListener("abort", cancel);
    const r = sequences[0]!;
    r.forks = sequences.slice(1);
    r.awaitKvWrites = request.kv?.awaitWrites === true;
    if (request.sampling.structured) void this.constrainThenSubmit(r, request);
    else this.route(r, request);
    if (count === 1) return r.events;
    return mergeSequences(
      sequences.map((s) => s.events),
      n,
      cancel,
    );
  }

  private route(r: EngineRequest, request: GenerateRequest): void {
    if (this.remote?.options.readThrough || (request.kv?.expectedRemoteBlocks ?? 0) > 0) {
      void this.fetchThenSubmit(r, request.kv?.expectedRemoteBlocks ?? 0);
    } else {
      this.engines.submit(r);
    }
  }

  /**
   * Compiles the request's structured output (cached per constraint) and opens its matcher past the
   * output a continuation already holds, then queues it; a constraint that does not compile fails it
   * with INVALID_ARGUMENT.
   */
  private async constrainThenSubmit(r: EngineRequest, request: GenerateRequest): Promise<void> {
    const { structured, structuredMatchedTokens: matched = 0 } = request.sampling;
    try {
      if (matched > request.promptIds.length)
        throw TesseraError.invalidArgument("structured.matched_tokens", "exceeds the prompt's length");
      // One matcher per sequence (n, best_of): each follows its own tokens through the constraint.
      const output = request.promptIds.slice(request.promptIds.length - matched);
      for (const s of [r, ...r.forks]) s.constraint = await this.grammars.open(structured!, output);
    } catch (err) {
      const error = TesseraError.from(err);
      for (const s of [r, ...r.forks.splice(0)]) {
        s.constraint?.dispose();
        s.events.fail(error);
      }
      return;
    }
    this.route(r, request);
  }

  /** Sequence `index` of a request: with a seed, sequence i draws with seed + i (mod 2^64), as vLLM does. */
  private sequence(request: GenerateRequest, index: number): EngineRequest {
    const { seed } = request.sampling;
    const sampling =
      index === 0 || seed === undefined
        ? request.sampling
        : { ...request.sampling, seed: BigInt.asUintN(64, seed + BigInt(index)) };
    const r: EngineRequest = new EngineRequest({
      id: index === 0 ? request.requestId : `${request.requestId}/${index}`,
      index,
      order: this.nextOrder++,
      priority: request.priority ?? 0,
      promptIds: request.promptIds,
      sampling,
      eosTokenIds: this.eosTokenIds,
      text: this.tokenizer.textStream({ skipSpecialTokens: sampling.skipSpecialTokens === true }),
      deadline: request.deadline,
      now: Date.now(),
      onCancel: () => {
        r.cancelRequested = true;
      },
      ...(index === 0 && { trace: request.trace }),
    });
    return r;
  }

  /** Prompt tokens computed since start, over every scheduling loop (not those taken from a cache or a fork). */
  get numPromptTokensComputed(): number {
    return this.engines.numPromptTokensComputed;
  }

  /** Imports the prefix blocks the remote tier holds, then queues the request. */
  private async fetchThenSubmit(r: EngineRequest, expected: number): Promise<void> {
    const started = Date.now();
    try {
      if (!this.remote) {
        throw new TesseraError(Code.FAILED_PRECONDITION, "kv: this worker has no remote KV tier configured");
      }
      r.pinnedBlocks = await this.remote.fetchPrefix(r.tokens, expected);
      r.numRemotePromptTokens = r.pinnedBlocks.length * this.pool.blockSize;
    } catch (err) {
      const error = TesseraError.from(err);
      r.trace?.phase("kv_transfer.read", started, Date.now(), { "tessera.kv.error": error.message });
      r.constraint?.dispose();
      r.events.fail(error);
      for (const child of r.forks.splice(0)) child.events.fail(error);
      return;
    }
    r.trace?.phase("kv_transfer.read", started, Date.now(), {
      "tessera.kv.blocks": r.pinnedBlocks.length,
      "tessera.kv.expected_blocks": expected,
    });
    this.engines.submit(r);
  }

  async close(): Promise<void> {
    await this.speculative?.close();
    await this.runner.close();
  }
}

/**
 * One scheduler per virtual engine. A single engine has the whole pool; several share it (kv-share.ts),
 * each with its share of the blocks and of the running requests, and the whole token budget per step.
 */
function virtualSchedulers(config: EngineConfig, pool: BlockPool, salt: string): Scheduler[] {
  const n = config.virtualEngines ?? 1;
  const limits = { maxNumBatchedTokens: config.maxNumBatchedTokens, maxNumSeqs: config.maxNumSeqs };
  if (n === 1) return [new Scheduler(new KvCacheManager(pool, salt, config.enablePrefixCaching), limits)];
  return splitBlocks(pool.numBlocks, n).map(
    (share) =>
      new Scheduler(new KvShare(pool, salt, config.enablePrefixCaching, share), {
        ...limits,
        maxNumSeqs: Math.ceil(config.maxNumSeqs / n),
      }),
  );
}

/** Checks the prompt against the model; errors name the request field. */
export function validatePrompt(promptIds: number[], model: ModelDescription): void {
  if (promptIds.length === 0) throw TesseraError.invalidArgument("prompt", "must not be empty");
  const bad = promptIds.find((id) => !Number.isInteger(id) || id < 0 || id >= model.vocabSize);
  if (bad !== undefined) {
    throw TesseraError.invalidArgument(
      "prompt",
      `token id ${bad} is outside the vocabulary (0..${model.vocabSize - 1})`,
    );
  }
  if (promptIds.length >= model.maxContext) {
    throw TesseraError.invalidArgument(
      "prompt",
      `${promptIds.length} tokens do not fit the model's context of ${model.maxContext} (at least one must be generated)`,
    );
  }
}
