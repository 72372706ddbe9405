// What every member of a group does with a step: run its shard on each micro-batch as it arrives
// (token ids on stage 0, hidden states from the previous stage otherwise), all-reduce the partial sums
// with its tensor peers, and hand the result on: hidden states to the same rank of the next stage, or,
// on the last stage, its vocabulary slice of the logits to rank 0. It also answers rank 0's KV export
// and import requests for its part of the blocks. Runs queue in the shard's thread in arrival order,
// which is the same order on every rank of a stage, so the all-reduces pair up.
import type { ShardFrame } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { TesseraError } from "../../common/errors.ts";
import type { ShardEntry } from "../runtime/shard-executor.ts";
import type { ShardWorker } from "../runtime/shard-worker.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { AllReduce } from "./all-reduce.ts";
import { bytesToFloats, floatBytes, sequencesFromWire, sequencesToWire } from "./frame-codec.ts";
import { COORDINATOR, memberOf, nextStage, tensorPeers } from "./group-layout.ts";
import type { ShardGroup } from "./shard-group.ts";

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
  private readonly worker: ShardWorker;
  private readonly tensorRank: number;
  private readonly next: number | undefined;
  private readonly onLogits: LogitsSink | undefined;
  private readonly onOther: ((from: number, frame: ShardFrame) => void) | undefined;

  constructor(parts: {
    group: ShardGroup;
    worker: ShardWorker;
    /** Rank 0: where logits slices go, and the frames a coordinator handles (KV replies). */
    onLogits?: LogitsSink;
    onOther?: (from: number, frame: ShardFrame) => void;
  }) {
    const { group, worker } = parts;
    this.group = group;
    this.worker = worker;
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
    group.failed.then((err) => {
      this.reducer.fail(err);
      worker.abort(err.message);
    });
  }

  /** Starts a micro-batch on this member (rank 0 for its own stage-0 shard; frames for the others). */
  run(batch: MicroBatch, entry: ShardEntry): void {
    const { stepId, microBatch } = batch;
    this.worker
      .run(batch.seqs, entry, (segment, partial) =>
        this.reducer.reduce({ stepId, microBatch, segment }, partial),
      )
      .then(
        (out) => this.handOn(batch, out.data),
        (err: unknown) => this.group.fail(`shard run failed: ${TesseraError.from(err).message}`),
      );
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
        this.answer(from, kind.value.requestId, this.worker.exportBlocks(kind.value.blocks));
        return;
      case "kvImport": {
        const { requestId, blocks, data } = kind.value;
        this.answer(
          from,
          requestId,
          this.worker.importBlocks(blocks, bytesToFloats(data)).then(() => undefined),
        );
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
