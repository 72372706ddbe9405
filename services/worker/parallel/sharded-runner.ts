// The engine's runner on rank 0 of a parallel replica: the same interface as the single-process
// ModelRunner, so the scheduler, KV manager and Engine are unchanged. A step is split into
// micro-batches; each goes to stage 0 (this member's shard, and its token ids to the other stage-0
// ranks), flows through the stages as hidden states, and comes back from the last stage's ranks as
// vocabulary slices of the logits, which are joined into whole rows for the sampler. KV export and
// import ask every member for its part of the blocks. Any failure of the group fails the waiting
// steps with UNAVAILABLE, and every later one.

import type { ShardFrame } from "../../../proto/gen/tessera/v1/shard_pb.js";
import { Code, TesseraError } from "../../common/errors.ts";
import type { Logger } from "../../common/log.ts";
import { describeCheckpoint } from "../model/checkpoint.ts";
import type { ModelThreadOptions } from "../runtime/messages.ts";
import type { ModelRunner, StepResult } from "../runtime/model-runner.ts";
import { ShardWorker } from "../runtime/shard-worker.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import { joinVocabSlices } from "../runtime/vocab-slices.ts";
import { bytesToFloats, floatBytes, sequencesToWire } from "./frame-codec.ts";
import { COORDINATOR, groupSize, memberOf, tensorPeers } from "./group-layout.ts";
import { joinKvParts, type KvDims, type KvPart, splitKvParts } from "./kv-layout.ts";
import { splitMicroBatches } from "./micro-batches.ts";
import type { OutgoingFrame } from "./peer-link.ts";
import { ShardGroup } from "./shard-group.ts";
import {
  groupKey,
  layerCoverageProblem,
  layoutOf,
  type ShardPlacement,
  shardSpec,
} from "./shard-placement.ts";
import { StageWorker } from "./stage-worker.ts";

export interface ShardedRunnerOptions extends ModelThreadOptions {
  placement: ShardPlacement;
  log: Logger;
}

interface PendingStep {
  /** Logits slices by micro-batch and tensor rank. */
  slices: Float32Array[][];
  remaining: number;
  started: number;
  timer: NodeJS.Timeout;
  resolve(result: StepResult): void;
  reject(err: TesseraError): void;
}

interface Deferred<T> {
  resolve(value: T): void;
  reject(err: TesseraError): void;
}

export class ShardedRunner implements ModelRunner {
  readonly loadMs: number;
  readonly attention: ModelRunner["attention"];
  readonly attentionTimings = {};
  readonly attentionRejected = {};
  /** Resolves with the reason when the group fails. */
  readonly failed: Promise<TesseraError>;
  readonly group: ShardGroup;
  private readonly worker: ShardWorker;
  private readonly stage: StageWorker;
  private readonly placement: ShardPlacement;
  private readonly vocab: number;
  private readonly kv: { dims: KvDims; parts: KvPart[] };
  private readonly steps = new Map<bigint, PendingStep>();
  private readonly kvRequests = new Map<bigint, Deferred<Float32Array>>();
  private nextStep = 1n;
  private nextKvRequest = 1n;

  private constructor(
    o: ShardedRunnerOptions,
    worker: ShardWorker,
    group: ShardGroup,
    kv: ShardedRunner["kv"],
    vocab: number,
    started: number,
  ) {
    this.placement = o.placement;
    this.worker = worker;
    this.group = group;
    this.kv = kv;
    this.vocab = vocab;
    this.attention = worker.ready.attention;
    this.loadMs = performance.now() - started;
    this.failed = group.failed;
    this.stage = new StageWorker({
      group,
      worker,
      onLogits: (batch, rank, data) => this.onLogits(batch.stepId, batch.microBatch, rank, data),
      onOther: (_from, frame) => this.onKvReply(frame),
    });
    group.failed.then((err) => this.failAll(err));
  }

  static async start(o: ShardedRunnerOptions): Promise<ShardedRunner> {
    const started = performance.now();
    const { placement: p } = o;
    const checkpoint = describeCheckpoint(o.modelDir, o.architectureOverride);
    const { config } = checkpoint;
    const spec = shardSpec(p, config.numLayers);
    const worker = await ShardWorker.start({ ...o, spec });
    const layout = layoutOf(p);
    const group = new ShardGroup({
      layout,
      self: COORDINATOR,
      peers: p.peers,
      groupKey: groupKey(p, checkpoint.revision, o),
      layers: spec.layers,
      formationTimeoutMs: p.formationTimeoutMs,
      log: o.log,
    });
    const kvHeads = config.numKvHeads / p.tensorSize;
    const dims = {
      numLayers: config.numLayers,
      kvHeads: config.numKvHeads,
      headDim: config.headDim,
      blockSize: o.blockSize,
    };
    const parts: KvPart[] = [];
    const runner = new ShardedRunner(o, worker, group, { dims, parts }, config.vocabSize, started);
    group.start();
    try {
      await group.ready;
      const problem = layerCoverageProblem(layout, group.members, config.numLayers);
      if (problem) throw new TesseraError(Code.FAILED_PRECONDITION, `parallel group: ${problem}`);
    } catch (err) {
      group.fail(TesseraError.from(err).message);
      await worker.close();
      throw err;
    }
    for (let g = 0; g < groupSize(layout); g++) {
      const report = group.members.get(g)!;
      const { rank } = memberOf(layout, g);
      parts.push({
        layers: { start: report.layerStart, end: report.layerEnd },
        heads: { start: rank * kvHeads, end: (rank + 1) * kvHeads },
      });
    }
    return runner;
  }

  step(tokens: Int32Array, seqs: SequenceStep[]): Promise<StepResult> {
    if (this.group.error) return Promise.reject(this.group.error);
    const stepId = this.nextStep++;
    const { stages, tensorSize, microBatches, stepTimeoutMs } = this.placement;
    const micro = splitMicroBatches(seqs, stages > 1 ? microBatches : 1);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => this.group.fail(`step ${stepId} did not finish within ${stepTimeoutMs} ms`),
        stepTimeoutMs,
      );
      this.steps.set(stepId, {
        slices: micro.map(() => new Array<Float32Array>(tensorSize)),
        remaining: micro.length * tensorSize,
        started: performance.now(),
        timer,
        resolve,
        reject,
      });
      const peers = tensorPeers(this.group.layout, COORDINATOR);
      for (const [microBatch, mb] of micro.entries()) {
        const ids = tokens.slice(mb.tokenStart, mb.tokenEnd);
        const batch = { stepId, microBatch, seqs: mb.seqs };
        const description = { stepId, microBatch, sequences: sequencesToWire(mb.seqs) };
        for (const peer of peers)
          this.group.send(
            peer,
            { case: "tokens", value: { batch: description, tokenIds: Array.from(ids) } },
            ids.byteLength,
          );
        this.stage.run(batch, { tokens: ids });
      }
    });
  }

  private onLogits(stepId: bigint, microBatch: number, tensorRank: number, data: Float32Array): void {
    const step = this.steps.get(stepId);
    const slots = step?.slices[microBatch];
    if (!step || !slots || slots[tensorRank]) {
      this.group.fail(`unexpected logits for step ${stepId}`);
      return;
    }
    slots[tensorRank] = data;
    if (--step.remaining > 0) return;
    this.steps.delete(stepId);
    clearTimeout(step.timer);
    const rows = step.slices.map((s) => joinVocabSlices(s, this.vocab));
    const logits = new Float32Array(rows.reduce((n, r) => n + r.length, 0));
    let at = 0;
    for (const r of rows) {
      logits.set(r, at);
      at += r.length;
    }
    step.resolve({ logits, runMs: performance.now() - step.started });
  }

  async exportBlocks(blocks: number[]): Promise<Float32Array> {
    const parts = await Promise.all(
      this.kv.parts.map((_, g) =>
        g === COORDINATOR
          ? this.worker.exportBlocks(blocks)
          : this.kvRequest(g, (requestId) => ({ case: "kvExport", value: { requestId, blocks } })),
      ),
    );
    return joinKvParts(
      this.kv.dims,
      blocks.length,
      parts.map((data, g) => ({ part: this.kv.parts[g]!, data })),
    );
  }

  async importBlocks(blocks: number[], data: Float32Array): Promise<void> {
    const split = splitKvParts(this.kv.dims, blocks.length, data, this.kv.parts);
    await Promise.all(
      split.map((part, g) =>
        g === COORDINATOR
          ? this.worker.importBlocks(blocks, part)
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

  private failAll(err: TesseraError): void {
    for (const step of this.steps.values()) {
      clearTimeout(step.timer);
      step.reject(err);
    }
    this.steps.clear();
    for (const r of this.kvRequests.values()) r.reject(err);
    this.kvRequests.clear();
  }

  async close(): Promise<void> {
    this.group.close();
    this.failAll(new TesseraError(Code.UNAVAILABLE, "the runner was closed"));
    await this.worker.close();
  }
}
