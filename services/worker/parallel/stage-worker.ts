// What every member of a group does with a step, in its member thread: run its shard on each
// micro-batch as it arrives (token ids on stage 0, hidden states from the previous stage otherwise),
// all-reduce the partial sums with its tensor peers, and hand the result on: hidden states to the same
// rank of the next stage, or, on the last stage, its vocabulary slice of the logits to rank 0. It also
// answers rank 0's KV export and import requests for its part of the blocks, in order with the runs.
import type { ShardFrame } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { TesseraError } from "../../common/errors.ts";
import type { ShardEntry, ShardExecutor } from "../runtime/shard-executor.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { AllReduce } from "./all-reduce.ts";
import { bytesToFloats, floatBytes, sequencesFromWire, sequencesToWire } from "./frame-codec.ts";
import { COORDINATOR, memberOf, nextStage, tensorPeers } from "./group-layout.ts";
import type { ShardGroup } from "./shard-group.ts";
import type { ShardStats } from "./shard-stats.ts";

/** One micro-batch of a step. */
export interface MicroBatch {
  stepId: bigint;
  microBatch: number;
  seqs: SequenceStep[];
}

/** Where logits slices end up on rank 0: (micro-batch, tensor rank, [L, V/ranks]). */
export type LogitsSink = (
  batch: { stepId: bigint; microBatch: number },
  tensorRank: number,
  data: Float32Array,
) => void;

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
  private readonly onLogits: LogitsSink | undefined;
  private readonly onOther: ((from: number, frame: ShardFrame) => void) | undefined;

  constructor(parts: {
    group: ShardGroup;
    executor: ShardExecutor;
    stats?: ShardStats;
    /** Rank 0: where logits slices go, and the frames a coordinator handles (KV replies). */
    onLogits?: LogitsSink;
    onOther?: (from: number, frame: ShardFrame) => void;
  }) {
    const { group, executor } = parts;
    this.group = group;
    this.executor = executor;
    this.stats = parts.stats;
    this.onLogits = parts.onLogits;
    this.onOther = parts.onOther;
    const { layout, self } = group;
    this.tensorRank = memberOf(layout, self).rank;
    this.next = nextStage(layout, self);
    const ranks = [...tensorPeers(layout, self), self].sort((a, b) => a - b);
    this.reducer = new AllReduce(ranks, self, (to, key, data) =>
      group.send(to, { case: "reduce", value: { ...key, data: floatBytes(data) } }, data.byteLength),
    );
    group.onFrame((from, frame) => this.dispatch(from, frame));
    group.failed.then((err) => this.reducer.fail(err));
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
      (err: unknown) => this.group.fail(`shard run failed: ${TesseraError.from(err).message}`),
    );
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
      const description = { stepId, microBatch, sequences: sequencesToWire(batch.seqs) };
      this.group.send(
        this.next,
        { case: "activation", value: { batch: description, hidden: floatBytes(data) } },
        data.byteLength,
      );
    } else if (this.group.self === COORDINATOR) {
      this.onLogits?.({ stepId, microBatch }, this.tensorRank, data);
    } else {
      const value = { stepId, microBatch, tensorRank: this.tensorRank, data: floatBytes(data) };
      this.group.send(COORDINATOR, { case: "logits", value }, data.byteLength);
    }
  }

  private dispatch(from: number, frame: ShardFrame): void {
    const { kind } = frame;
    switch (kind.case) {
      case "tokens": {
        const b = kind.value.batch!;
        const batch = { stepId: b.stepId, microBatch: b.microBatch, seqs: sequencesFromWire(b.sequences) };
        this.run(batch, { tokens: Int32Array.from(kind.value.tokenIds) });
        return;
      }
      case "activation": {
        const b = kind.value.batch!;
        const batch = { stepId: b.stepId, microBatch: b.microBatch, seqs: sequencesFromWire(b.sequences) };
        this.run(batch, { hidden: bytesToFloats(kind.value.hidden) });
        return;
      }
      case "reduce": {
        const { stepId, microBatch, segment, data } = kind.value;
        this.reducer.deliver(from, { stepId, microBatch, segment }, bytesToFloats(data));
        return;
      }
      case "logits": {
        const { stepId, microBatch, tensorRank, data } = kind.value;
        this.onLogits?.({ stepId, microBatch }, tensorRank, bytesToFloats(data));
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
