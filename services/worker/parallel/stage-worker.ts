// What every member of a group does with a step, in its member thread: run its shard on each
// micro-batch as it arrives (token ids on stage 0, hidden states from the previous stage otherwise),
// all-reduce the partial sums with its tensor peers, and hand the result on: hidden states to the same
// rank of the next stage or, on the last stage, its vocabulary slice of the logits to the stage's first
// rank. That rank joins the slices into whole rows and, for a batch that asks it to, samples each
// row's token (the "the last stage applies the final norm, lm_head and sampling"): rank 0
// gets the tokens and their logprobs, a few bytes per row, instead of vocabulary-wide rows. It also
// answers rank 0's KV export and import requests for its part of the blocks, in order with the runs.
// In a group of one (a single process) this member is every stage and rank: a micro-batch runs the
// whole model and its output goes straight to rank 0's coordinator, with no frame and no all-reduce.
import type { BatchDescription, ShardFrame } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { TesseraError } from "../../kernel/errors.ts";
import type { SampledRow } from "../runtime/model-runner.ts";
import type { ShardEntry, ShardExecutor } from "../runtime/shard-executor.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { joinVocabSlices } from "../runtime/vocab-slices.ts";
import { sampleRow } from "../sampling/sampler.ts";
import { AllReduce } from "./all-reduce.ts";
import {
  bytesToFloats,
  floatBytes,
  sampledBytes,
  sampledFromWire,
  sampledToWire,
  sequencesFromWire,
  sequencesToWire,
} from "./frame-codec.ts";
import { COORDINATOR, globalRank, groupSize, memberOf, nextStage, tensorPeers } from "./group-layout.ts";
import type { ShardGroup } from "./shard-group.ts";
import type { ShardStats } from "./shard-stats.ts";

/** One micro-batch of a step. */
export interface MicroBatch {
  stepId: bigint;
  microBatch: number;
  seqs: SequenceStep[];
  /** The last stage samples each needsLogits row (by its `sampling`) instead of returning the logits. */
  sample: boolean;
}

/**
 * A micro-batch's output on rank 0: its whole logits rows [L, V], or its sampled rows; in a group of
 * one, why its run failed.
 */
export type MicroBatchOutput = Float32Array | SampledRow[] | TesseraError;

export type OutputSink = (batch: { stepId: bigint; microBatch: number }, output: MicroBatchOutput) => void;

/** The logits slices of one micro-batch, as the last stage's first rank collects them. */
interface Gathering {
  slices: Float32Array[];
  remaining: number;
  /** The micro-batch, known once this rank's own run finished. */
  batch: MicroBatch | undefined;
}

/** Samples every needsLogits row of `rows` ([L, vocab], in order) by its RowSampling. */
export function sampleRows(rows: Float32Array, seqs: readonly SequenceStep[], vocab: number): SampledRow[] {
  const out: SampledRow[] = [];
  for (const s of seqs) {
    if (!s.needsLogits) continue;
    const row = rows.subarray(out.length * vocab, (out.length + 1) * vocab);
    try {
      if (!s.sampling) throw new Error("the row has no sampling");
      out.push(sampleRow(row, s.sampling));
    } catch (err) {
      out.push({ error: TesseraError.from(err).message });
    }
  }
  return out;
}

export class StageWorker {
  readonly reducer: AllReduce;
  private readonly group: ShardGroup;
  private readonly executor: ShardExecutor;
  private readonly stats: ShardStats | undefined;
  /** Runs wait for the KV export or import queued before them. */
  private barrier: Promise<void> = Promise.resolve();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly tensorRank: number;
  private readonly next: number | undefined;
  /** The last stage's first rank, where its ranks' logits slices are joined (and sampled). */
  private readonly lastStageFirst: number;
  private readonly vocab: number;
  /** The only member of its group: a failed run fails its step, not the group. */
  private readonly alone: boolean;
  private readonly gathering = new Map<string, Gathering>();
  private readonly onOutput: OutputSink | undefined;
  private readonly onOther: ((from: number, frame: ShardFrame) => void) | undefined;

  constructor(parts: {
    group: ShardGroup;
    executor: ShardExecutor;
    /** The model's vocabulary (the width of a whole logits row). */
    vocab: number;
    stats?: ShardStats;
    /** Rank 0: where each micro-batch's output goes, and the frames a coordinator handles (KV replies). */
    onOutput?: OutputSink;
    onOther?: (from: number, frame: ShardFrame) => void;
  }) {
    const { group, executor } = parts;
    this.group = group;
    this.executor = executor;
    this.vocab = parts.vocab;
    this.stats = parts.stats;
    this.onOutput = parts.onOutput;
    this.onOther = parts.onOther;
    const { layout, self } = group;
    this.tensorRank = memberOf(layout, self).rank;
    this.next = nextStage(layout, self);
    this.lastStageFirst = globalRank(layout, { stage: layout.stages - 1, rank: 0 });
    this.alone = groupSize(layout) === 1;
    const ranks = [...tensorPeers(layout, self), self].sort((a, b) => a - b);
    this.reducer = new AllReduce(ranks, self, (to, key, data) =>
      group.send(to, { case: "reduce", value: { ...key, data: floatBytes(data) } }, data.byteLength),
    );
    group.onFrame((from, frame) => this.dispatch(from, frame));
    group.failed.then((err) => {
      this.reducer.fail(err);
      this.gathering.clear();
    });
  }

  /**
   * Starts a micro-batch on this member (rank 0 for its own stage-0 shard; frames for the others).
   * Runs start at once, beside the ones in flight: while one waits for an all-reduce, the next
   * computes, so communication overlaps computation (the runs of a step touch disjoint KV slots).
   */
  run(batch: MicroBatch, entry: ShardEntry): void {
    const { stepId, microBatch } = batch;
    let waited = 0;
    const reduce = async (segment: number, partial: Float32Array) => {
      const t0 = performance.now();
      const sum = await this.reducer.reduce({ stepId, microBatch, segment }, partial);
      waited += performance.now() - t0;
      return sum;
    };
    const timed = async () => {
      const t0 = performance.now();
      const data = await this.executor.run(batch.seqs, entry, reduce);
      this.stats?.add("runs", 1);
      this.stats?.add("run_seconds", (performance.now() - t0 - waited) / 1000);
      this.stats?.add("reduces", this.executor.numSegments - 1);
      this.stats?.add("reduce_wait_seconds", waited / 1000);
      return data;
    };
    this.concurrently(timed).then(
      (data) => this.handOn(batch, data),
      (err: unknown) => this.runFailed(batch, TesseraError.from(err)),
    );
  }

  /**
   * In a group, a failed run leaves the members' KV and the step's frames out of step: the group fails.
   * Alone, nothing else depends on it, so only the step fails (its requests end with the error).
   */
  private runFailed(batch: MicroBatch, err: TesseraError): void {
    if (this.alone && this.onOutput) this.onOutput(batch, err);
    else this.group.fail(`shard run failed: ${err.message}`);
  }

  /** This member's part of KV blocks, once the runs started before are done. */
  exportBlocks(blocks: number[]): Promise<Float32Array> {
    return this.exclusively(async () => this.executor.exportBlocks(blocks));
  }

  /** Writes this member's part of KV blocks, after the runs started before and before any later one. */
  importBlocks(blocks: number[], data: Float32Array): Promise<undefined> {
    return this.exclusively(async () => {
      this.executor.importBlocks(blocks, data);
      return undefined;
    });
  }

  private concurrently<T>(work: () => Promise<T>): Promise<T> {
    const run = this.barrier.then(work);
    const settled = run.then(
      () => {},
      () => {},
    );
    this.inFlight.add(settled);
    settled.then(() => this.inFlight.delete(settled));
    return run;
  }

  private exclusively<T>(work: () => Promise<T>): Promise<T> {
    const op = Promise.all([this.barrier, ...this.inFlight]).then(work);
    this.barrier = op.then(
      () => {},
      () => {},
    );
    return op;
  }

  private handOn(batch: MicroBatch, data: Float32Array): void {
    const { stepId, microBatch } = batch;
    if (this.next !== undefined) {
      // Only the first ranks carry the sampling on, towards the last stage's first rank.
      const sequences = sequencesToWire(batch.seqs, this.tensorRank === 0);
      const description = { stepId, microBatch, sequences, sample: batch.sample };
      this.group.send(
        this.next,
        { case: "activation", value: { batch: description, hidden: floatBytes(data) } },
        data.byteLength,
      );
    } else if (this.group.self === this.lastStageFirst) {
      this.gather(batch, this.tensorRank, data, batch);
    } else {
      const value = { stepId, microBatch, tensorRank: this.tensorRank, data: floatBytes(data) };
      this.group.send(this.lastStageFirst, { case: "logits", value }, data.byteLength);
    }
  }

  /** On the last stage's first rank: one rank's slice of a micro-batch's logits; the rest once all are in. */
  private gather(
    key: { stepId: bigint; microBatch: number },
    tensorRank: number,
    slice: Float32Array,
    batch?: MicroBatch,
  ): void {
    const id = `${key.stepId}/${key.microBatch}`;
    const ranks = this.group.layout.tensorSize;
    let g = this.gathering.get(id);
    if (!g) {
      g = { slices: new Array<Float32Array>(ranks), remaining: ranks, batch: undefined };
      this.gathering.set(id, g);
    }
    if (g.slices[tensorRank] || tensorRank >= ranks) {
      this.group.fail(`unexpected logits slice of rank ${tensorRank} for step ${key.stepId}`);
      return;
    }
    g.slices[tensorRank] = slice;
    g.batch ??= batch;
    if (--g.remaining > 0) return;
    this.gathering.delete(id);
    const rows = joinVocabSlices(g.slices, this.vocab);
    const done = g.batch!;
    this.deliver(key, done.sample ? sampleRows(rows, done.seqs, this.vocab) : rows);
  }

  /** A micro-batch's output, from the last stage's first rank to rank 0. */
  private deliver(key: { stepId: bigint; microBatch: number }, output: Float32Array | SampledRow[]): void {
    if (this.group.self === COORDINATOR) {
      this.onOutput?.(key, output);
    } else if (output instanceof Float32Array) {
      const value = { ...key, tensorRank: 0, data: floatBytes(output) };
      this.group.send(COORDINATOR, { case: "logits", value }, output.byteLength);
    } else {
      const value = { ...key, rows: sampledToWire(output) };
      this.group.send(COORDINATOR, { case: "sampled", value }, sampledBytes(output));
    }
  }

  private dispatch(from: number, frame: ShardFrame): void {
    const { kind } = frame;
    switch (kind.case) {
      case "tokens":
        this.run(batchFromWire(kind.value.batch!), { tokens: Int32Array.from(kind.value.tokenIds) });
        return;
      case "activation":
        this.run(batchFromWire(kind.value.batch!), { hidden: bytesToFloats(kind.value.hidden) });
        return;
      case "reduce": {
        const { stepId, microBatch, segment, data } = kind.value;
        this.reducer.deliver(from, { stepId, microBatch, segment }, bytesToFloats(data));
        return;
      }
      case "logits": {
        const { stepId, microBatch, tensorRank, data } = kind.value;
        // A slice for the last stage's first rank to join, or (on rank 0) the rows that rank joined.
        if (this.group.self === this.lastStageFirst)
          this.gather({ stepId, microBatch }, tensorRank, bytesToFloats(data));
        else this.onOutput?.({ stepId, microBatch }, bytesToFloats(data));
        return;
      }
      case "sampled": {
        const { stepId, microBatch, rows } = kind.value;
        this.onOutput?.({ stepId, microBatch }, sampledFromWire(rows));
        return;
      }
      case "kvExport":
        this.answer(from, kind.value.requestId, this.exportBlocks(kind.value.blocks));
        return;
      case "kvImport": {
        const { requestId, blocks, data } = kind.value;
        this.answer(from, requestId, this.importBlocks(blocks, bytesToFloats(data)));
        return;
      }
      default:
        this.onOther?.(from, frame);
    }
  }

  private answer(to: number, requestId: bigint, work: Promise<Float32Array | undefined>): void {
    work.then(
      (data) => {
        const bytes = data ? floatBytes(data) : new Uint8Array(0);
        this.group.send(to, { case: "kvReply", value: { requestId, data: bytes } }, bytes.byteLength);
      },
      (err: unknown) =>
        this.group.send(to, { case: "kvReply", value: { requestId, error: TesseraError.from(err).message } }),
    );
  }
}

function batchFromWire(b: BatchDescription): MicroBatch {
  return {
    stepId: b.stepId,
    microBatch: b.microBatch,
    seqs: sequencesFromWire(b.sequences),
    sample: b.sample,
  };
}
