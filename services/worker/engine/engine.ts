// A loaded model ready to generate: the checkpoint's description and tokenizer on the event loop,
// the weights and onnxruntime session in the model thread (ModelRunner).
import os from "node:os";
import path from "node:path";
import type { Logger } from "../../common/log.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import { ModelRunner } from "../runtime/model-runner.ts";
import { Tokenizer } from "../tokenizer/tokenizer.ts";
import { generateSequence } from "./generate-sequence.ts";
import type { GenerateEvent, GenerateRequest, ModelDescription } from "./types.ts";

export interface EngineOptions {
  /** onnxruntime intra-op threads (default: the machine's cores). */
  threads?: number;
  /** Use this architecture instead of the one config.json names. */
  architecture?: string;
  /** The model id clients use (default: the folder's name). */
  id?: string;
  log?: Logger;
}

export class Engine {
  readonly description: ModelDescription;
  readonly tokenizer: Tokenizer;
  /** Token ids that end a generation unless ignore_eos. */
  readonly eosTokenIds: readonly number[];
  private readonly runner: ModelRunner;

  private constructor(
    description: ModelDescription,
    tokenizer: Tokenizer,
    eos: number[],
    runner: ModelRunner,
  ) {
    this.description = description;
    this.tokenizer = tokenizer;
    this.eosTokenIds = eos;
    this.runner = runner;
  }

  static async load(modelDir: string, options: EngineOptions = {}): Promise<Engine> {
    const checkpoint = describeCheckpoint(modelDir, options.architecture);
    const tokenizer = Tokenizer.fromFile(modelDir);
    const runner = await ModelRunner.start({
      modelDir,
      architectureOverride: options.architecture,
      threads: options.threads ?? os.availableParallelism(),
    });
    const { config } = checkpoint;
    const description: ModelDescription = {
      id: options.id ?? path.basename(path.resolve(modelDir)),
      architecture: config.architecture,
      maxContext: config.maxContext,
      vocabSize: config.vocabSize,
      dtype: checkpoint.dtype,
    };
    options.log?.info({ model: description, loadMs: Math.round(runner.loadMs) }, "model loaded");
    return new Engine(description, tokenizer, checkpoint.eosTokenIds, runner);
  }

  /** Streams the completion of one request; throws INVALID_ARGUMENT before any event for a bad prompt. */
  generate(request: GenerateRequest, signal?: AbortSignal): AsyncIterable<GenerateEvent> {
    return generateSequence(
      {
        runner: this.runner,
        tokenizer: this.tokenizer,
        description: this.description,
        eosTokenIds: this.eosTokenIds,
      },
      request,
      signal,
    );
  }

  close(): Promise<void> {
    return this.runner.close();
  }
}
