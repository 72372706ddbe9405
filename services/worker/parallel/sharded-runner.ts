// The engine's runner, on rank 0 of a parallel replica and in every single process (the one member of a
// group of one, ModelRunner.start): the ModelRunner the scheduler, KV manager and Engine drive. It
// hands each step to rank 0's member thread, which coordinates it across the group (coordinator.ts; in
// a group of one, a run of the whole model in that thread) and answers with the tokens its last stage
// sampled (samplesRows: the engine sends each row's sampling along), or, in a group of one, with the
// logits rows, which the engine samples on the event loop. Once the group fails, every waiting and
// later call fails with UNAVAILABLE.
import type { TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { ModelRunner, ModelRunnerOptions, StepResult } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { groupSize } from "./group-layout.ts";
import { MemberHandle, type ReadyInfo } from "./member-handle.ts";
import type { FromMember } from "./member-messages.ts";
import { layoutOf, type ShardPlacement } from "./shard-placement.ts";

export interface ShardedRunnerOptions extends ModelRunnerOptions {
  placement: ShardPlacement;
  /** The member thread logs at this logger's level (default info). */
  log?: Logger;
}

export class ShardedRunner implements ModelRunner {
  readonly loadMs: number;
  readonly graphBytes: number;
  readonly attention: ModelRunner["attention"];
  readonly attentionTimings: ModelRunner["attentionTimings"];
  readonly attentionRejected: ModelRunner["attentionRejected"];
  /**
   * A group samples on its last stage, so that no logits travel. A group of one hands the logits to
   * the event loop (transferred, not copied), which samples: measured against sampling in the model
   * thread, serving 16 concurrent requests with onnxruntime on both cores, the model thread's sampling
   * competed with onnxruntime's spinning threads and the event loop's gRPC work (see README.md).
   */
  readonly samplesRows: boolean;
  /** Resolves with the reason when the group fails. */
  readonly failed: Promise<TesseraError>;
  /** Rank 0's member thread (its link statistics feed the shard metrics). */
  readonly member: MemberHandle;

  private constructor(member: MemberHandle, ready: ReadyInfo, loadMs: number, samplesRows: boolean) {
    this.member = member;
    this.samplesRows = samplesRows;
    this.attention = ready.attention;
    this.attentionTimings = ready.attentionTimings;
    this.attentionRejected = ready.attentionRejected;
    this.graphBytes = ready.graphBytes;
    this.loadMs = loadMs;
    this.failed = member.failed;
  }

  /** Loads rank 0's shard and resolves once the whole group is wired. */
  static async start(o: ShardedRunnerOptions): Promise<ShardedRunner> {
    const started = performance.now();
    const member = new MemberHandle({
      modelDir: o.modelDir,
      architectureOverride: o.architectureOverride,
      ...(o.widenWeights && { widenWeights: true }),
      ...(o.quantization && { quantization: o.quantization }),
      threads: o.threads,
      numBlocks: o.numBlocks,
      blockSize: o.blockSize,
      attention: o.attention,
      placement: o.placement,
      logLevel: o.log?.level ?? "info",
    });
    try {
      const ready = await member.ready;
      const samplesRows = groupSize(layoutOf(o.placement)) > 1;
      return new ShardedRunner(member, ready, performance.now() - started, samplesRows);
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
