// The engine's runner on rank 0 of a parallel replica: the same interface as the single-process
// ModelRunner, so the scheduler, KV manager and Engine are unchanged. It hands each step to rank 0's
// member thread, which coordinates it across the group (coordinator.ts) and answers with whole logits
// rows, or with the tokens its last stage sampled (samplesRows: the engine sends each row's sampling
// along). Once the group fails, every waiting and later call fails with UNAVAILABLE.
import type { TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ModelThreadOptions } from "../runtime/messages.ts";
import type { ModelRunner, StepResult } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { MemberHandle } from "./member-handle.ts";
import type { FromMember } from "./member-messages.ts";
import type { ShardPlacement } from "./shard-placement.ts";

export interface ShardedRunnerOptions extends ModelThreadOptions {
  placement: ShardPlacement;
  log: Logger;
}

export class ShardedRunner implements ModelRunner {
  readonly loadMs: number;
  readonly attention: ModelRunner["attention"];
  readonly attentionTimings = {};
  readonly attentionRejected = {};
  readonly samplesRows = true;
  /** Resolves with the reason when the group fails. */
  readonly failed: Promise<TesseraError>;
  /** Rank 0's member thread (its link statistics feed the shard metrics). */
  readonly member: MemberHandle;

  private constructor(member: MemberHandle, attention: ModelRunner["attention"], loadMs: number) {
    this.member = member;
    this.attention = attention;
    this.loadMs = loadMs;
    this.failed = member.failed;
  }

  /** Loads rank 0's shard and resolves once the whole group is wired. */
  static async start(o: ShardedRunnerOptions): Promise<ShardedRunner> {
    const started = performance.now();
    const member = new MemberHandle({
      modelDir: o.modelDir,
      architectureOverride: o.architectureOverride,
      threads: o.threads,
      numBlocks: o.numBlocks,
      blockSize: o.blockSize,
      attention: o.attention,
      placement: o.placement,
      logLevel: o.log.level,
    });
    try {
      const ready = await member.ready;
      return new ShardedRunner(member, ready.attention, performance.now() - started);
    } catch (err) {
      await member.close();
      throw err;
    }
  }

  async step(tokens: Int32Array, seqs: SequenceStep[]): Promise<StepResult> {
    const m = (await this.member.call((id) => ({ type: "step", id, tokens, seqs }))) as Extract<
      FromMember,
      { type: "logits" }
    >;
    return { logits: m.logits, ...(m.tokens && { tokens: m.tokens }), runMs: m.runMs };
  }

  async exportBlocks(blocks: number[]): Promise<Float32Array> {
    const m = (await this.member.call((id) => ({ type: "export", id, blocks }))) as Extract<
      FromMember,
      { type: "blocks" }
    >;
    return m.data;
  }

  async importBlocks(blocks: number[], data: Float32Array): Promise<void> {
    await this.member.call((id) => ({ type: "import", id, blocks, data }), [data.buffer as ArrayBuffer]);
  }

  close(): Promise<void> {
    return this.member.close();
  }
}
