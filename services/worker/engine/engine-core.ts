// The engine loop: schedule -> run the model on the batch -> sample, stop checks, stream out.
// It runs while there is work and sleeps otherwise; the model runs in its own thread, so the event
// loop stays free to serve requests during a step.

import type { FinishReason, GeneratedToken } from "../../inference/types.ts";
import { Code, TesseraError } from "../../kernel/errors.ts";
import type { Logger } from "../../kernel/log.ts";
import type { KvCacheManager } from "../kv/kv-cache-manager.ts";
import type { ModelRunner, SampledRow, StepResult } from "../runtime/model-runner.ts";
import type { SequenceStep } from "../runtime/step-inputs.ts";
import type { EngineMetrics } from "./engine-metrics.ts";
import { appendToken, finishEvents, type OutputLimits } from "./output-processor.ts";
import type { RemoteKv } from "./remote-kv.ts";
import { type EngineRequest, RequestStatus } from "./request.ts";
import { recordPhases } from "./request-phases.ts";
import type { Scheduler, SchedulerOutput } from "./scheduler.ts";

export interface EngineCoreParts {
  runner: ModelRunner;
  scheduler: Scheduler;
  kv: KvCacheManager;
  metrics: EngineMetrics | undefined;
  limits: OutputLimits;
  vocabSize: number;
  log: Logger | undefined;
  remote?: RemoteKv | undefined;
  now?: () => number;
}

export class EngineCore {
  private readonly p: EngineCoreParts;
  private readonly now: () => number;
  private loopActive = false;
  private steps = 0;

  constructor(parts: EngineCoreParts) {
    this.p = parts;
    this.now = parts.now ?? Date.now;
  }

  get numSteps(): number {
    return this.steps;
  }

  submit(request: EngineRequest): void {
    request.timings.submitted = this.now();
    this.p.scheduler.add(request);
    if (!this.loopActive) {
      this.loopActive = true;
      void this.loop();
    }
  }

  private async loop(): Promise<void> {
    const { scheduler } = this.p;
    try {
      while (scheduler.hasWork) {
        this.reap();
        if (!scheduler.hasWork) break;
        const out = scheduler.schedule();
        for (const r of out.rejected) r.events.fail(r.error);
        for (const s of out.scheduled) this.unpin(s.request);
        this.p.metrics?.step(out.numBatchedTokens, out.preempted.length);
        if (out.scheduled.length === 0) {
          await new Promise((resolve) => setImmediate(resolve));
          continue;
        }
        await this.step(out);
      }
    } catch (err) {
      this.p.log?.error({ err }, "engine loop failed");
      const error = TesseraError.from(err);
      for (const r of [...scheduler.running, ...scheduler.waiting]) this.fail(r, error);
    } finally {
      this.loopActive = false;
    }
  }

  private async step(out: SchedulerOutput): Promise<void> {
    const seqs: SequenceStep[] = [];
    const tokens = new Int32Array(out.numBatchedTokens);
    let offset = 0;
    const now = this.now();
    // A runner that samples where the logits are (a parallel replica's last stage) gets each row's
    // sampling: the step's draw from the request's stream and the ids its penalties touch.
    const remote = this.p.runner.samplesRows === true;
    for (const s of out.scheduled) {
      const { request, numPast, numNew, needsLogits } = s;
      request.timings.firstScheduled ??= now;
      tokens.set(request.tokens.slice(numPast, numPast + numNew), offset);
      offset += numNew;
      const sampling = remote && needsLogits ? request.sampler.prepare(request.history) : undefined;
      seqs.push({
        numPast,
        numNew,
        blockTable: request.kv.blocks,
        needsLogits,
        ...(sampling && { sampling }),
      });
    }
    let result: StepResult;
    try {
      result = await this.p.runner.step(tokens, seqs);
    } catch (err) {
      const error = TesseraError.from(err);
      this.p.log?.error({ err: error.message }, "model step failed");
      for (const s of out.scheduled) this.fail(s.request, error);
      return;
    }
    this.steps++;
    this.postprocess(out, result);
  }

  private postprocess(out: SchedulerOutput, { logits, tokens }: StepResult): void {
    const { kv, vocabSize } = this.p;
    let row = 0;
    const now = this.now();
    for (const { request, numNew, needsLogits } of out.scheduled) {
      const at = needsLogits ? row++ : -1;
      if (request.isFinished) continue;
      if (request.cancelRequested) {
        this.finish(request, "cancelled");
        continue;
      }
      request.numComputedTokens += numNew;
      const hashedBefore = request.kv.hashes.length;
      kv.cacheComputedBlocks(request.kv, request.tokens, request.numComputedTokens);
      if (this.p.remote?.options.writeThrough && request.kv.hashes.length > hashedBefore)
        this.storeBlocks(request, hashedBefore);
      if (at < 0) continue;
      let reason: FinishReason | undefined;
      try {
        const token = tokens
          ? sampledToken(tokens[at])
          : request.sampler.sample(logits.subarray(at * vocabSize, (at + 1) * vocabSize), request.history);
        this.p.metrics?.token(request, now);
        request.timings.firstToken ??= now;
        request.timings.lastToken = now;
        reason = appendToken(request, token, this.p.limits);
      } catch (err) {
        this.fail(request, TesseraError.from(err));
        continue;
      }
      if (reason) this.finish(request, reason);
    }
  }

  /** Stores the blocks that just became full (exported now, before any later step can reuse them). */
  private storeBlocks(request: EngineRequest, from: number): void {
    const bs = this.p.kv.blockSize;
    request.timings.firstKvWrite ??= this.now();
    const refs = request.kv.hashes.slice(from).map((hash, i) => ({
      hash,
      tokens: request.tokens.slice((from + i) * bs, (from + i + 1) * bs),
    }));
    request.kvWrites.push(
      this.p.remote!.store(request.kv.blocks.slice(from, request.kv.hashes.length), refs),
    );
  }

  /** Drops the references that kept a request's imported blocks alive until the request held them. */
  private unpin(request: EngineRequest): void {
    if (request.pinnedBlocks.length === 0) return;
    this.p.kv.pool.release(request.pinnedBlocks);
    request.pinnedBlocks = [];
  }

  /** Ends cancelled and expired requests before the next step, freeing their blocks. */
  private reap(): void {
    const { scheduler } = this.p;
    const now = this.now();
    for (const r of [...scheduler.running, ...scheduler.waiting]) {
      if (r.cancelRequested) this.finish(r, "cancelled");
      else if (r.deadline !== undefined && now > r.deadline) {
        this.fail(r, new TesseraError(Code.DEADLINE_EXCEEDED, `request ${r.id} passed its deadline`));
      }
    }
  }

  private finish(request: EngineRequest, reason: FinishReason): void {
    if (request.status === RequestStatus.FINISHED) return;
    this.unpin(request);
    this.p.scheduler.remove(request);
    finishEvents(request, reason);
    this.p.metrics?.finish(request, reason, this.now());
    recordPhases(request, this.now());
  }

  private fail(request: EngineRequest, error: TesseraError): void {
    if (request.status === RequestStatus.FINISHED) return;
    this.unpin(request);
    this.p.scheduler.remove(request);
    request.error = error;
    request.events.fail(error);
    this.p.metrics?.finish(request, "error", this.now());
    recordPhases(request, this.now());
  }
}

/** A row the runner sampled; a row it could not sample fails its request with the reason. */
function sampledToken(row: SampledRow | undefined): GeneratedToken {
  if (row === undefined)
    throw new TesseraError(Code.INTERNAL, "the runner returned fewer sampled rows than asked");
  if ("error" in row) throw new TesseraError(Code.INTERNAL, row.error);
  return row;
}
