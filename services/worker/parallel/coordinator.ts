// Rank 0's side of each step, in its member thread. A step is split into micro-batches; each goes to
// stage 0 (this member's shard, and its token ids to the other stage-0 ranks), flows through the stages
// as hidden states, and comes back from the last stage's first rank as sampled tokens (when every row
// that needs logits says how to sample it) or as whole logits rows. KV export and import ask every
// member for its part of the blocks. When the group fails, every waiting step fails with UNAVAILABLE.
// In a group of one (a single process) rank 0 is every stage: a step is one run of the whole model
// here, its logits handed back as the session returned them, and a run that fails fails only its step.
import type { ShardFrame } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { SampledRow, StepResult } from "../runtime/model-runner.ts";
import type { ShardExecutor } from "../runtime/shard-executor.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { bytesToFloats, floatBytes, sequencesToWire } from "./frame-codec.ts";
import { COORDINATOR, memberOf, tensorPeers } from "./group-layout.ts";
import { joinKvParts, type KvDims, type KvPart, splitKvParts } from "./kv-layout.ts";
import { splitMicroBatches } from "./micro-batches.ts";
import type { OutgoingFrame } from "./peer-link.ts";
import type { ShardGroup } from "./shard-group.ts";
import type { ShardPlacement } from "./shard-placement.ts";
import type { ShardStats } from "./shard-stats.ts";
import { type MicroBatch, type MicroBatchOutput, StageWorker } from "./stage-worker.ts";

interface PendingStep {
  /** Each micro-batch's output: logits rows, or sampled rows when the step samples. */
  outputs: (Float32Array | SampledRow[] | TesseraError | undefined)[];
  remaining: number;
  sample: boolean;
  started: number;
  timer: NodeJS.Timeout | undefined;
  resolve(result: StepResult): void;
  reject(err: TesseraError): void;
}

interface Deferred<T> {
  resolve(value: T): void;
  reject(err: TesseraError): void;
}

export class Coordinator {
  private readonly group: ShardGroup;
  private readonly stage: StageWorker;
  private readonly placement: ShardPlacement;
  private readonly kvDims: KvDims;
  private readonly stats: ShardStats | undefined;
  /** The other stage-0 ranks, which get every micro-batch's token ids. */
  private readonly peers: number[];
  private readonly steps = new Map<bigint, PendingStep>();
  private readonly kvRequests = new Map<bigint, Deferred<Float32Array>>();
  private nextStep = 1n;
  private nextKvRequest = 1n;

  constructor(parts: {
    group: ShardGroup;
    executor: ShardExecutor;
    placement: ShardPlacement;
    vocab: number;
    kvDims: KvDims;
    stats?: ShardStats;
  }) {
    this.group = parts.group;
    this.placement = parts.placement;
    this.kvDims = parts.kvDims;
    this.stats = parts.stats;
    this.peers = tensorPeers(parts.group.layout, COORDINATOR);
    this.stage = new StageWorker({
      group: parts.group,
      executor: parts.executor,
      vocab: parts.vocab,
      ...(parts.stats && { stats: parts.stats }),
      onOutput: (batch, output) => this.onOutput(batch.stepId, batch.microBatch, output),
      onOther: (_from, frame) => this.onKvReply(frame),
    });
    parts.group.failed.then((err) => this.failAll(err));
  }

  /**
   * Runs one step through the group. When every sequence that needs logits carries its `sampling`,
   * the last stage samples and the result has `tokens`; otherwise it has the logits rows.
   */
  step(tokens: Int32Array, seqs: SequenceStep[]): Promise<StepResult> {
    if (this.group.error) return Promise.reject(this.group.error);
    const stepId = this.nextStep++;
    const { microBatches, stepTimeoutMs } = this.placement;
    // The last stage samples only where each needsLogits row is one row with its sampling: prompt logits
    // and a speculative row's k + 1 rows come back as logits (step-inputs.ts, logitRowCount).
    const sample = seqs.every(
      (s) => !s.promptLogits && (!s.needsLogits || (s.sampling !== undefined && (s.numLogits ?? 1) === 1)),
    );
    const micro = splitMicroBatches(seqs, microBatches);
    return new Promise((resolve, reject) => {
      const timer = Number.isFinite(stepTimeoutMs)
        ? setTimeout(
            () => this.group.fail(`step ${stepId} did not finish within ${stepTimeoutMs} ms`),
            stepTimeoutMs,
          )
        : undefined;
      this.steps.set(stepId, {
        outputs: micro.map(() => undefined),
        remaining: micro.length,
        sample,
        started: performance.now(),
        timer,
        resolve,
        reject,
      });
      for (const [microBatch, mb] of micro.entries()) {
        const batch = { stepId, microBatch, seqs: mb.seqs, sample };
        const ids = tokens.subarray(mb.tokenStart, mb.tokenEnd);
        this.sendTokens(batch, ids);
        this.stage.run(batch, { tokens: ids });
      }
    });
  }

  /**
   * A micro-batch's token ids to the other stage-0 ranks (none without tensor ranks), which never
   * sample: their copy leaves the rows' sampling out.
   */
  private sendTokens(batch: MicroBatch, ids: Int32Array): void {
    if (this.peers.length === 0) return;
    const { stepId, microBatch, seqs, sample } = batch;
    const description = { stepId, microBatch, sequences: sequencesToWire(seqs, false), sample };
    for (const peer of this.peers)
      this.group.send(
        peer,
        { case: "tokens", value: { batch: description, tokenIds: Array.from(ids) } },
        ids.byteLength,
      );
  }

  /** A micro-batch's output; the step resolves once all are in (or fails with the first run's error). */
  private onOutput(stepId: bigint, microBatch: number, output: MicroBatchOutput): void {
    const step = this.steps.get(stepId);
    if (
      !step ||
      microBatch >= step.outputs.length ||
      step.outputs[microBatch] ||
      (!(output instanceof TesseraError) && step.sample === output instanceof Float32Array)
    ) {
      this.group.fail(`unexpected output for step ${stepId}`);
      return;
    }
    step.outputs[microBatch] = output;
    if (--step.remaining > 0) return;
    this.steps.delete(stepId);
    clearTimeout(step.timer);
    const failed = step.outputs.find((o) => o instanceof TesseraError);
    if (failed) {
      step.reject(failed);
      return;
    }
    const runMs = performance.now() - step.started;
    this.stats?.add("steps", 1);
    this.stats?.add("step_seconds", runMs / 1000);
    if (step.sample) {
      step.resolve({ logits: new Float32Array(0), tokens: (step.outputs as SampledRow[][]).flat(), runMs });
      return;
    }
    step.resolve({ logits: joinRows(step.outputs as Float32Array[]), runMs });
  }

  /** What each member holds of every block, by global rank (known once the group formed). */
  private kvParts(): KvPart[] {
    const { layout, members } = this.group;
    const kvHeads = this.kvDims.kvHeads / layout.tensorSize;
    return [...members.keys()]
      .sort((a, b) => a - b)
      .map((g) => {
        const report = members.get(g)!;
        const { rank } = memberOf(layout, g);
        return {
          layers: { start: report.layerStart, end: report.layerEnd },
          heads: { start: rank * kvHeads, end: (rank + 1) * kvHeads },
        };
      });
  }

  async exportBlocks(blocks: number[]): Promise<Float32Array> {
    const parts = this.kvParts();
    const data = await Promise.all(
      parts.map((_, g) =>
        g === COORDINATOR
          ? this.stage.exportBlocks(blocks)
          : this.kvRequest(g, (requestId) => ({ case: "kvExport", value: { requestId, blocks } })),
      ),
    );
    return joinKvParts(
      this.kvDims,
      blocks.length,
      data.map((d, g) => ({ part: parts[g]!, data: d })),
    );
  }

  async importBlocks(blocks: number[], data: Float32Array): Promise<void> {
    const split = splitKvParts(this.kvDims, blocks.length, data, this.kvParts());
    await Promise.all(
      split.map((part, g) =>
        g === COORDINATOR
          ? this.stage.importBlocks(blocks, part)
          : this.kvRequest(
              g,
              (requestId) => ({ case: "kvImport", value: { requestId, blocks, data: floatBytes(part) } }),
              part.byteLength,
            ),
      ),
    );
  }

  private kvRequest(
    member: number,
    frame: (requestId: bigint) => OutgoingFrame,
    bytes = 0,
  ): Promise<Float32Array> {
    if (this.group.error) return Promise.reject(this.group.error);
    const requestId = this.nextKvRequest++;
    return new Promise((resolve, reject) => {
      this.kvRequests.set(requestId, { resolve, reject });
      this.group.send(member, frame(requestId), bytes);
    });
  }

  private onKvReply(frame: ShardFrame): void {
    if (frame.kind.case !== "kvReply") return;
    const { requestId, data, error } = frame.kind.value;
    const pending = this.kvRequests.get(requestId);
    if (!pending) return;
    this.kvRequests.delete(requestId);
    if (error) pending.reject(new TesseraError(Code.INTERNAL, `KV blocks: ${error}`));
    else pending.resolve(bytesToFloats(data));
  }

  failAll(err: TesseraError): void {
    for (const step of this.steps.values()) {
      clearTimeout(step.timer);
      step.reject(err);
    }
    this.steps.clear();
    for (const r of this.kvRequests.values()) r.reject(err);
    this.kvRequests.clear();
  }
}

/** The micro-batches' logits rows, one after the other: the one batch of a step as it is, without a copy. */
function joinRows(rows: Float32Array[]): Float32Array {
  if (rows.length === 1) return rows[0]!;
  const logits = new Float32Array(rows.reduce((n, r) => n + r.length, 0));
  let at = 0;
  for (const r of rows) {
    logits.set(r, at);
    at += r.length;
  }
  return logits;
}
